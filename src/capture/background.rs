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
    pub fn spawn(
        name: &str,
        write: impl FnOnce(Receiver<T>) -> io::Result<()> + Send + 'static,
    ) -> io::Result<Self> {
        let (queue, batches) = sync_channel(QUEUED);
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || write(batches))?;
        Ok(Self {
            queue: Some(queue),
            thread: Some(thread),
        })
    }

    /// Hand over one batch; if the thread stopped at an error, that error.
    pub fn send(&mut self, batch: T) -> io::Result<()> {
        match &self.queue {
            Some(queue) if queue.send(batch).is_ok() => Ok(()),
            _ => Err(self
                .join()
                .err()
                .unwrap_or_else(|| io::Error::other("the writer thread stopped"))),
        }
    }

    /// Close the queue and wait until everything handed over is written: the thread's outcome.
    pub fn finish(mut self) -> io::Result<()> {
        self.join()
    }

    fn join(&mut self) -> io::Result<()> {
        self.queue.take();
        match self.thread.take() {
            Some(thread) => thread
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("the writer thread panicked"))),
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
/// Written batches come back ([`SampleSink::spare`]) for the caller to fill again
/// ([`super::Stream::recycle`]) instead of allocating every batch afresh.
// One sink per capture, moved once: boxing the larger variant would buy nothing.
#[allow(clippy::large_enum_variant)]
pub enum SampleSink<W: SampleWriter> {
    Here(W, Option<Samples>),
    Thread(Background<(Samples, Option<Arc<str>>)>, Receiver<Samples>),
}

/// Written batches the writer thread hands back at most (more are dropped there): about what
/// is in flight, so nothing piles up when the caller takes none.
const RETURNED: usize = QUEUED + 2;

impl<W: SampleWriter> SampleSink<W> {
    /// `writer` on this thread, or on thread `name` when `background`.
    pub fn new(mut writer: W, background: bool, name: &str) -> io::Result<Self> {
        if !background {
            return Ok(Self::Here(writer, None));
        }
        let (back, returned) = sync_channel(RETURNED);
        let thread = Background::spawn(
            name,
            move |batches: Receiver<(Samples, Option<Arc<str>>)>| {
                for (samples, capture) in batches {
                    writer.write(&samples, capture.as_deref())?;
                    // Full (the caller takes none) or closed: the batch is simply dropped.
                    let _ = back.try_send(samples);
                }
                writer.finish()
            },
        )?;
        Ok(Self::Thread(thread, returned))
    }

    /// Write one batch (nothing for an empty one); on a writer thread, hand it over and return
    /// any error the thread met on an earlier batch.
    pub fn write(&mut self, samples: Samples, capture: Option<&str>) -> io::Result<()> {
        if samples.is_empty() {
            return Ok(());
        }
        match self {
            Self::Here(writer, spare) => {
                writer.write(&samples, capture)?;
                *spare = Some(samples);
                Ok(())
            }
            Self::Thread(thread, _) => thread.send((samples, capture.map(Arc::from))),
        }
    }

    /// A batch already written, if one is back: its columns (rows and all) are the caller's
    /// to reuse.
    pub fn spare(&mut self) -> Option<Samples> {
        match self {
            Self::Here(_, spare) => spare.take(),
            Self::Thread(_, returned) => returned.try_recv().ok(),
        }
    }

    /// Everything written and finished: the outcome.
    pub fn finish(self) -> io::Result<()> {
        match self {
            Self::Here(writer, _) => writer.finish(),
            Self::Thread(thread, _) => thread.finish(),
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

    /// Writes nothing; counts the rows it was given.
    struct Count(Arc<Mutex<usize>>);

    impl SampleWriter for Count {
        fn write(&mut self, samples: &Samples, _: Option<&str>) -> io::Result<()> {
            *self.0.lock().unwrap() += samples.len();
            Ok(())
        }

        fn finish(self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn written_batches_come_back_with_their_room_here_and_from_a_writer_thread() {
        let rows = |n: usize| {
            let mut s = Samples::default();
            for i in 0..n {
                s.push(
                    i as u32,
                    0,
                    0,
                    1,
                    crate::capture::Method::Seq,
                    false,
                    false,
                    (0, 1),
                    1,
                    0,
                );
            }
            s
        };
        for background in [false, true] {
            let seen = Arc::new(Mutex::new(0));
            let mut sink =
                SampleSink::new(Count(Arc::clone(&seen)), background, "test-writer").unwrap();
            let mut back = Vec::new();
            for _ in 0..50 {
                sink.write(rows(1000), None).unwrap();
                back.extend(std::iter::from_fn(|| sink.spare()));
            }
            sink.finish().unwrap();
            assert_eq!(*seen.lock().unwrap(), 50_000);
            // A writer thread keeps only a few batches for a caller that takes none.
            assert!(
                !back.is_empty() && back.len() <= 50,
                "background {background}: {}",
                back.len()
            );
            assert!(back
                .iter()
                .all(|b| b.len() == 1000 && b.conn.capacity() >= 1000));
        }
        let mut idle =
            SampleSink::new(Count(Arc::new(Mutex::new(0))), true, "test-writer").unwrap();
        for _ in 0..50 {
            idle.write(rows(10), None).unwrap();
        }
        let SampleSink::Thread(thread, returned) = idle else {
            panic!("a writer thread")
        };
        thread.finish().unwrap();
        assert!(returned.try_iter().count() <= RETURNED);
    }

    #[test]
    fn the_threads_error_comes_back_at_the_next_hand_over_or_at_the_end() {
        let failing = || {
            Background::spawn("test-writer", |batches| {
                for b in batches {
                    if b == 3 {
                        return Err(io::Error::from_raw_os_error(28));
                    }
                }
                Ok(())
            })
        };
        let mut w = failing().unwrap();
        let err = (0..1000).try_for_each(|i| w.send(i)).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(28));
        let mut w = failing().unwrap();
        w.send(3).unwrap();
        assert_eq!(w.finish().unwrap_err().raw_os_error(), Some(28));
    }
}
