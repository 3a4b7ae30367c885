//! The samples table as a Parquet file, written by the core (`rttlab samples -o FILE.parquet`):
//! the Arrow record batches of [`super::export::record_batch`] through the `parquet` crate, so the
//! command line never imports pyarrow (≈ 0.2 s and ≈ 60 MB of a run).
//!
//! Layout: one row group per batch, each column stored as its declaration says
//! ([`tables::Storage`]: Snappy, dictionary pages, `DELTA_BINARY_PACKED`, statistics — and why),
//! and the Arrow schema stored in the footer (`ARROW:schema`), so pyarrow, pandas and DuckDB read
//! the same column types back (categories stay categories).
//!
//! Encoding can run on a thread of its own ([`SampleParquet::create`] with `background`,
//! [`super::background`]): the caller hands over each batch of samples and goes on analysing the
//! capture while the previous batch is turned into Arrow columns, encoded, compressed and
//! written. The file is the same byte for byte either way.

use std::fs::File;
use std::io::{self, BufWriter};
use std::path::Path;
use std::sync::Arc;

use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, Encoding};
use parquet::errors::ParquetError;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;

use super::background::{SampleSink, SampleWriter};
use super::{export, tables, Samples};

/// The Parquet file's writer, batch by batch.
struct Rows(ArrowWriter<BufWriter<File>>);

/// A Parquet file of samples being written, batch by batch.
pub struct SampleParquet {
    sink: SampleSink<Rows>,
    rows: u64,
}

/// A write error as the I/O error underneath when there is one (errno kept: "No space left on
/// device" for a full disk), else as `InvalidData` with the crate's message.
fn io_error(e: ParquetError) -> io::Error {
    match e {
        ParquetError::External(inner) => match inner.downcast::<io::Error>() {
            Ok(io) => *io,
            Err(other) => io::Error::other(other.to_string()),
        },
        other => io::Error::new(io::ErrorKind::InvalidData, other.to_string()),
    }
}

/// Snappy and no dictionaries unless a column's [`tables::Storage`] says otherwise.
fn properties() -> WriterProperties {
    let mut props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_dictionary_enabled(false);
    for c in tables::columns(true) {
        let path = ColumnPath::from(c.name);
        if c.storage.dictionary() {
            props = props.set_column_dictionary_enabled(path.clone(), true);
        }
        if c.storage.delta() {
            props = props.set_column_encoding(path.clone(), Encoding::DELTA_BINARY_PACKED);
        }
        if !c.storage.compressed() {
            props = props.set_column_compression(path.clone(), Compression::UNCOMPRESSED);
        }
        if !c.storage.statistics() {
            props = props.set_column_statistics_enabled(path, EnabledStatistics::None);
        }
    }
    props.build()
}

impl SampleWriter for Rows {
    /// One batch as its own row group: the encoded group leaves memory at once instead of up to
    /// a million rows being buffered.
    fn write(&mut self, samples: &Samples, capture: Option<&str>) -> io::Result<()> {
        self.0
            .write(&export::record_batch(samples, capture))
            .map_err(io_error)?;
        self.0.flush().map_err(io_error)
    }

    /// Write the footer and flush the file to the OS.
    fn finish(mut self) -> io::Result<()> {
        self.0.finish().map_err(io_error)?;
        // The footer sits in the buffer: flush it here, where an error is seen (a dropped
        // BufWriter swallows it).
        io::Write::flush(self.0.inner_mut())
    }
}

impl SampleParquet {
    /// Create (truncate) `path` for the samples schema, with a leading `capture` column when
    /// `with_capture`; `background` encodes on a writer thread.
    pub fn create(path: &Path, with_capture: bool, background: bool) -> io::Result<Self> {
        let file = File::create(path)?;
        let schema = Arc::new(super::tables::schema(with_capture));
        let writer = ArrowWriter::try_new(
            BufWriter::with_capacity(1 << 20, file),
            schema,
            Some(properties()),
        )
        .map_err(io_error)?;
        Ok(Self {
            sink: SampleSink::new(Rows(writer), background, "rttlab-parquet")?,
            rows: 0,
        })
    }

    /// Append one batch of samples as its own row group (nothing for an empty batch), with
    /// `capture` in every row of the `capture` column when the file has one. With a writer
    /// thread, an error it met on an earlier batch is returned here.
    pub fn write(&mut self, samples: Samples, capture: Option<&str>) -> io::Result<()> {
        let rows = samples.len() as u64;
        self.sink.write(samples, capture)?;
        self.rows += rows;
        Ok(())
    }

    /// A batch already written, if one is back (see [`SampleSink::spare`]).
    pub fn spare(&mut self) -> Option<Samples> {
        self.sink.spare()
    }

    /// Rows written so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Write the footer and flush the file to the OS; returns the rows written.
    pub fn close(self) -> io::Result<u64> {
        self.sink.finish()?;
        Ok(self.rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::{Method, Samples};
    use arrow_array::RecordBatch;
    use parquet::file::reader::{FileReader, SerializedFileReader};

    fn rows(n: usize) -> Samples {
        let mut s = Samples::default();
        for i in 0..n {
            s.push(
                i as u32 % 3,
                (i % 2) as u8,
                i as i64 * 1000,
                5_000_000 + i as u64,
                Method::ALL[i % 3],
                false,
                i % 5 == 0,
                (i as u32, i as u32 + 10),
                i as u64 + 1,
                i as u64,
            );
        }
        s
    }

    #[test]
    fn each_batch_becomes_one_row_group_and_the_rows_read_back() {
        let dir = std::env::temp_dir().join(format!("rttlab-parquet-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("s.parquet");
        let mut w = SampleParquet::create(&path, true, false).unwrap();
        w.write(rows(10), Some("a.pcap")).unwrap();
        w.write(Samples::default(), Some("a.pcap")).unwrap();
        w.write(rows(7), Some("b.pcap")).unwrap();
        assert_eq!(w.close().unwrap(), 17);

        let reader = SerializedFileReader::new(File::open(&path).unwrap()).unwrap();
        let meta = reader.metadata();
        assert_eq!(meta.num_row_groups(), 2);
        assert_eq!(meta.file_metadata().num_rows(), 17);
        // Every column of every row group is stored as its declaration says.
        for group in meta.row_groups() {
            for c in tables::columns(true) {
                let col = group
                    .columns()
                    .iter()
                    .find(|x| x.column_path().string() == c.name)
                    .unwrap();
                let has = |e: Encoding| col.encodings().any(|x| x == e);
                assert_eq!(
                    has(Encoding::RLE_DICTIONARY),
                    c.storage.dictionary(),
                    "{} dictionary",
                    c.name
                );
                assert_eq!(
                    has(Encoding::DELTA_BINARY_PACKED),
                    c.storage.delta(),
                    "{} delta",
                    c.name
                );
                assert_eq!(
                    col.compression() == Compression::SNAPPY,
                    c.storage.compressed(),
                    "{} compression",
                    c.name
                );
                assert_eq!(
                    col.statistics().is_some(),
                    c.storage.statistics(),
                    "{} statistics",
                    c.name
                );
            }
        }
        assert!(["method", "direction", "capture"]
            .iter()
            .all(|n| tables::columns(true).any(|c| c.name == *n && c.storage.dictionary())));

        let batches: Vec<RecordBatch> =
            parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
                File::open(&path).unwrap(),
            )
            .unwrap()
            .build()
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        // Same values column by column; dictionary columns compared as the strings they name
        // (a reader may rebuild the dictionary with only the values used).
        let want = export::record_batch(&rows(10), Some("a.pcap"));
        assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 17);
        let got = batches[0].slice(0, 10);
        for (i, field) in want.schema().fields().iter().enumerate() {
            let (a, b) = (want.column(i), got.column_by_name(field.name()).unwrap());
            match field.data_type() {
                arrow_schema::DataType::Dictionary(..) => {
                    assert_eq!(strings(a), strings(b), "{}", field.name())
                }
                _ => assert_eq!(a.as_ref(), b.as_ref(), "{}", field.name()),
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn strings(a: &arrow_array::ArrayRef) -> Vec<String> {
        use arrow_array::cast::AsArray;
        use arrow_array::types::Int8Type;
        let d = a.as_dictionary::<Int8Type>();
        let values = d.values().as_string::<i32>();
        d.keys()
            .values()
            .iter()
            .map(|&k| values.value(k as usize).to_owned())
            .collect()
    }

    #[test]
    fn a_file_with_no_rows_still_has_the_columns() {
        let dir = std::env::temp_dir().join(format!("rttlab-parquet-empty-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("e.parquet");
        assert_eq!(
            SampleParquet::create(&path, false, false)
                .unwrap()
                .close()
                .unwrap(),
            0
        );
        let reader = SerializedFileReader::new(File::open(&path).unwrap()).unwrap();
        assert_eq!(reader.metadata().file_metadata().num_rows(), 0);
        assert_eq!(
            reader
                .metadata()
                .file_metadata()
                .schema_descr()
                .num_columns(),
            11
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_full_disk_is_reported_as_the_io_error_underneath() {
        if !Path::new("/dev/full").exists() {
            return;
        }
        for background in [false, true] {
            let mut w = SampleParquet::create(Path::new("/dev/full"), false, background).unwrap();
            let err = (0..4)
                .try_for_each(|_| w.write(rows(200_000), None))
                .and_then(|_| w.close().map(|_| ()));
            assert_eq!(
                err.unwrap_err().raw_os_error(),
                Some(28),
                "background {background}"
            ); // ENOSPC
        }
    }

    #[test]
    fn a_writer_thread_writes_the_same_file_byte_for_byte() {
        let dir =
            std::env::temp_dir().join(format!("rttlab-parquet-thread-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let files: Vec<Vec<u8>> = [false, true]
            .iter()
            .map(|&background| {
                let path = dir.join(format!("s-{background}.parquet"));
                let mut w = SampleParquet::create(&path, true, background).unwrap();
                for (n, name) in [
                    (70_000, "a.pcap"),
                    (0, "a.pcap"),
                    (5, "b.pcap"),
                    (65_536, "b.pcap"),
                ] {
                    w.write(rows(n), Some(name)).unwrap();
                }
                assert_eq!(w.close().unwrap(), 135_541);
                std::fs::read(&path).unwrap()
            })
            .collect();
        assert!(files[0].len() > 100_000);
        assert!(files[0] == files[1], "the files differ");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
