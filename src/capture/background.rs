//! A writer on a thread of its own: the caller hands over batches through a short queue and
//! goes on analysing while the previous batch is encoded and written (`rttlab samples` with a
//! second thread). The thread's first error comes back at the next hand-over or at the end.

use std::io;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

use super::Samples;

/// Batches queued while the writer is busy: two keep it fed without holding more than a few MB.
const QUEUED: usize = 2;

/// A thread that writes the `T`s handed to it.
pub struct Background<T: Send + 'static> {
    queue: Option<SyncSender<T>>,
    thread: Option<JoinHandle<io::Result<()>>>,
}

impl<T: Send + 'static> Background<T> {
    /// Start thread `name` running `write` over the batches handed over, in order, until the
    /// queue is closed ([`Background::finish`]); `write` returns at its first error.
    pub fn spawn(name: &str, write: impl FnOnce(Receiver<T>) -> io::Result<()> + Send + 'static) -> io::Result<Self> {
        let (queue, batches) = sync_channel(QUEUED);
        let thread = std::thread::Builder::new().name(name.into()).spawn(move || write(batches))?;
        Ok(Self { queue: Some(queue), thread: Some(thread) })
    }

    /// Hand over one batch; if the thread stopped at an error, that error.
    pub fn send(&mut self, batch: T) -> io::Result<()> {
        match &self.queue {
            Some(queue) if queue.send(batch).is_ok() => Ok(()),
            _ => Err(self.join().err().unwrap_or_else(|| io::Error::other("the writer thread stopped"))),
        }
    }

    /// Close the queue and wait until everything handed over is written: the thread's outcome.
    pub fn finish(mut self) -> io::Result<()> {
        self.join()
    }

    fn join(&mut self) -> io::Result<()> {
        self.queue.take();
        match self.thread.take() {
            Some(thread) => thread.join().unwrap_or_else(|_| Err(io::Error::other("the writer thread panicked"))),
            None => Err(io::Error::other("the writer thread already stopped")),
        }
    }
}

impl<T: Send + 'static> Drop for Background<T> {
    /// Dropped unfinished (an error elsewhere): what was handed over is still written before
    /// the caller goes on.
    fn drop(&mut self) {
        if self.thread.is_some() {
            let _ = self.join();
        }
    }
}

/// A writer of sample batches (a Parquet file, CSV text), each batch with the capture name its
/// rows carry in a `capture` column when the output has one.
pub trait SampleWriter: Send + 'static {
    fn write(&mut self, samples: &Samples, capture: Option<&str>) -> io::Result<()>;
    /// Write what is left (a footer, a buffer) once the last batch is in.
    fn finish(self) -> io::Result<()>;
}

/// A [`SampleWriter`] run here or on a writer thread of its own: the same output either way.
pub enum SampleSink<W: SampleWriter> {
    Here(W),
    Thread(Background<(Samples, Option<Arc<str>>)>),
}

impl<W: SampleWriter> SampleSink<W> {
    /// `writer` on this thread, or on thread `name` when `background`.
    pub fn new(mut writer: W, background: bool, name: &str) -> io::Result<Self> {
        if !background {
            return Ok(Self::Here(writer));
        }
        Ok(Self::Thread(Background::spawn(name, move |batches: Receiver<(Samples, Option<Arc<str>>)>| {
            for (samples, capture) in batches {
                writer.write(&samples, capture.as_deref())?;
            }
            writer.finish()
        })?))
    }

    /// Write one batch (nothing for an empty one); on a writer thread, hand it over and return
    /// any error the thread met on an earlier batch.
    pub fn write(&mut self, samples: Samples, capture: Option<&str>) -> io::Result<()> {
        if samples.is_empty() {
            return Ok(());
        }
        match self {
            Self::Here(writer) => writer.write(&samples, capture),
            Self::Thread(thread) => thread.send((samples, capture.map(Arc::from))),
        }
    }

    /// Everything written and finished: the outcome.
    pub fn finish(self) -> io::Result<()> {
        match self {
            Self::Here(writer) => writer.finish(),
            Self::Thread(thread) => thread.finish(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[test]
    fn batches_are_written_in_order_by_the_time_finish_returns() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let into = Arc::clone(&seen);
        let mut w = Background::spawn("test-writer", move |batches| {
            for b in batches {
                into.lock().unwrap().push(b);
            }
            Ok(())
        })
        .unwrap();
        for i in 0..100 {
            w.send(i).unwrap();
        }
        w.finish().unwrap();
        assert_eq!(*seen.lock().unwrap(), (0..100).collect::<Vec<_>>());
    }

    #[test]
    fn the_threads_error_comes_back_at_the_next_hand_over_or_at_the_end() {
        let failing = || Background::spawn("test-writer", |batches| {
            for b in batches {
                if b == 3 {
                    return Err(io::Error::from_raw_os_error(28));
                }
            }
            Ok(())
        });
        let mut w = failing().unwrap();
        let err = (0..1000).try_for_each(|i| w.send(i)).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(28));
        let mut w = failing().unwrap();
        w.send(3).unwrap();
        assert_eq!(w.finish().unwrap_err().raw_os_error(), Some(28));
    }
}
