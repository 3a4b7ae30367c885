//! The samples table as a Parquet file, written by the core (`rttlab samples -o FILE.parquet`):
//! the Arrow record batches of [`super::export::record_batch`] through the `parquet` crate, so the
//! command line never imports pyarrow (≈ 0.2 s and ≈ 60 MB of a run).
//!
//! Layout: one row group per batch, Snappy compression (pyarrow's default) for the columns it
//! shrinks (times, RTTs, flags; not [`UNCOMPRESSED_COLUMNS`]), dictionary pages for
//! the few-valued text columns ([`DICTIONARY_COLUMNS`]), `DELTA_BINARY_PACKED` for the integer
//! columns ([`DELTA_COLUMNS`]: connection ids, sequence numbers and frame numbers rise in small
//! steps, so their pages shrink before Snappy sees them — measured on a 916,476-row capture,
//! 168 → 150 ms and 18.5 → 17.7 MB against plain encoding; dictionaries tried on times, RTTs and
//! sequence numbers cost 3× the whole write for a larger file), and the Arrow schema stored in
//! the footer (`ARROW:schema`), so pyarrow, pandas and DuckDB read the same column types back
//! (categories stay categories).
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
use super::{export, Samples};

/// Sample columns stored dictionary-encoded (few distinct values).
pub const DICTIONARY_COLUMNS: [&str; 3] = ["capture", "direction", "method"];

/// Integer sample columns stored as deltas (RLE/bit-packed differences, Parquet's
/// `DELTA_BINARY_PACKED`).
pub const DELTA_COLUMNS: [&str; 5] = ["conn", "seq_start", "seq_end", "frame", "ref_frame"];

/// Columns stored without Snappy: their encoded pages are already dense (bit-packed deltas and
/// dictionary indices), so Snappy shrank them by 0–10 % (5 % together: 17.7 → 18.2 MB for the
/// 916,476-row benchmark file) for ≈ 6 % of the write's CPU time (median of 15 interleaved
/// writes of those rows, one core: 145 → 136 CPU-ms).
/// Readers see the same table either way; uncompressed pages are also quicker to read.
pub const UNCOMPRESSED_COLUMNS: [&str; 7] = ["conn", "direction", "method", "seq_start", "seq_end", "frame", "ref_frame"];

/// Columns stored without min/max statistics: every row group holds both directions and,
/// nearly always, two or three methods (on the 1 GB benchmark capture and every shared capture,
/// each row group's range is fwd–rev and seq–ts or seq–syn), so their ranges exclude no row
/// group from a reader's filter; computing them compares every row's text (≈ 20 of the write's
/// ≈ 180 CPU-ms on 916,476 rows, `perf`: `compute_min_max` → memcmp). `capture` keeps its
/// statistics: one file's rows are contiguous, so its range does prune.
pub const NO_STATISTICS_COLUMNS: [&str; 2] = ["direction", "method"];

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

fn properties() -> WriterProperties {
    let mut props = WriterProperties::builder().set_compression(Compression::SNAPPY).set_dictionary_enabled(false);
    for name in DICTIONARY_COLUMNS {
        props = props.set_column_dictionary_enabled(ColumnPath::from(name), true);
    }
    for name in DELTA_COLUMNS {
        props = props.set_column_encoding(ColumnPath::from(name), Encoding::DELTA_BINARY_PACKED);
    }
    for name in UNCOMPRESSED_COLUMNS {
        props = props.set_column_compression(ColumnPath::from(name), Compression::UNCOMPRESSED);
    }
    for name in NO_STATISTICS_COLUMNS {
        props = props.set_column_statistics_enabled(ColumnPath::from(name), EnabledStatistics::None);
    }
    props.build()
}

impl SampleWriter for Rows {
    /// One batch as its own row group: the encoded group leaves memory at once instead of up to
    /// a million rows being buffered.
    fn write(&mut self, samples: &Samples, capture: Option<&str>) -> io::Result<()> {
        self.0.write(&export::record_batch(samples, capture)).map_err(io_error)?;
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
        let writer = ArrowWriter::try_new(BufWriter::with_capacity(1 << 20, file), schema, Some(properties())).map_err(io_error)?;
        Ok(Self { sink: SampleSink::new(Rows(writer), background, "rttlab-parquet")?, rows: 0 })
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
            s.push(i as u32 % 3, (i % 2) as u8, i as i64 * 1000, 5_000_000 + i as u64, Method::ALL[i % 3], false, i % 5 == 0, (i as u32, i as u32 + 10), i as u64 + 1, i as u64);
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
        let group = meta.row_group(0);
        let encodings = |name: &str| {
            let col = group.columns().iter().find(|c| c.column_path().string() == name).unwrap();
            col.encodings().any(|e| e == parquet::basic::Encoding::RLE_DICTIONARY)
        };
        assert!(encodings("method") && encodings("direction") && encodings("capture"));
        assert!(!encodings("rtt") && !encodings("time") && !encodings("conn"));
        let delta = |name: &str| {
            let col = group.columns().iter().find(|c| c.column_path().string() == name).unwrap();
            col.encodings().any(|e| e == parquet::basic::Encoding::DELTA_BINARY_PACKED)
        };
        assert!(DELTA_COLUMNS.iter().all(|c| delta(c)) && !delta("time"));
        let compression = |name: &str| group.columns().iter().find(|c| c.column_path().string() == name).unwrap().compression();
        assert!(["time", "rtt", "ambiguous", "idle_echo", "capture"].iter().all(|c| compression(c) == Compression::SNAPPY));
        assert!(UNCOMPRESSED_COLUMNS.iter().all(|c| compression(c) == Compression::UNCOMPRESSED));
        let statistics = |name: &str| group.columns().iter().find(|c| c.column_path().string() == name).unwrap().statistics().is_some();
        assert!(NO_STATISTICS_COLUMNS.iter().all(|c| !statistics(c)));
        assert!(["time", "rtt", "conn", "capture"].iter().all(|c| statistics(c)));

        let batches: Vec<RecordBatch> = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(File::open(&path).unwrap())
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
                arrow_schema::DataType::Dictionary(..) => assert_eq!(strings(a), strings(b), "{}", field.name()),
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
        d.keys().values().iter().map(|&k| values.value(k as usize).to_owned()).collect()
    }

    #[test]
    fn a_file_with_no_rows_still_has_the_columns() {
        let dir = std::env::temp_dir().join(format!("rttlab-parquet-empty-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("e.parquet");
        assert_eq!(SampleParquet::create(&path, false, false).unwrap().close().unwrap(), 0);
        let reader = SerializedFileReader::new(File::open(&path).unwrap()).unwrap();
        assert_eq!(reader.metadata().file_metadata().num_rows(), 0);
        assert_eq!(reader.metadata().file_metadata().schema_descr().num_columns(), 11);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_full_disk_is_reported_as_the_io_error_underneath() {
        if !Path::new("/dev/full").exists() {
            return;
        }
        for background in [false, true] {
            let mut w = SampleParquet::create(Path::new("/dev/full"), false, background).unwrap();
            let err = (0..4).try_for_each(|_| w.write(rows(200_000), None)).and_then(|_| w.close().map(|_| ()));
            assert_eq!(err.unwrap_err().raw_os_error(), Some(28), "background {background}"); // ENOSPC
        }
    }

    #[test]
    fn a_writer_thread_writes_the_same_file_byte_for_byte() {
        let dir = std::env::temp_dir().join(format!("rttlab-parquet-thread-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let files: Vec<Vec<u8>> = [false, true]
            .iter()
            .map(|&background| {
                let path = dir.join(format!("s-{background}.parquet"));
                let mut w = SampleParquet::create(&path, true, background).unwrap();
                for (n, name) in [(70_000, "a.pcap"), (0, "a.pcap"), (5, "b.pcap"), (65_536, "b.pcap")] {
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
