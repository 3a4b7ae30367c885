//! The samples table as a Parquet file, written by the core (`rttlab samples -o FILE.parquet`):
//! the Arrow record batches of [`super::export::record_batch`] through the `parquet` crate, so the
//! command line never imports pyarrow (≈ 0.2 s and ≈ 60 MB of a run).
//!
//! The file is laid out as pyarrow's `ParquetWriter` wrote it before: one row group per batch,
//! Snappy compression (pyarrow's default), dictionary pages only for the few-valued columns
//! ([`DICTIONARY_COLUMNS`]) — dictionaries tried on times, RTTs and sequence numbers cost 3× the
//! whole write for a larger file — and the Arrow schema stored in the footer (`ARROW:schema`), so
//! pyarrow, pandas and DuckDB read the same column types back (categories stay categories).

use std::fs::File;
use std::io::{self, BufWriter};
use std::path::Path;
use std::sync::Arc;

use arrow_array::RecordBatch;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::errors::ParquetError;
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnPath;

use super::export;

/// Sample columns stored dictionary-encoded (few distinct values).
pub const DICTIONARY_COLUMNS: [&str; 4] = ["capture", "conn", "direction", "method"];

/// A Parquet file of samples being written, batch by batch.
pub struct SampleParquet {
    writer: ArrowWriter<BufWriter<File>>,
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

impl SampleParquet {
    /// Create (truncate) `path` for the samples schema, with a leading `capture` column when
    /// `with_capture`.
    pub fn create(path: &Path, with_capture: bool) -> io::Result<Self> {
        let file = File::create(path)?;
        let mut props = WriterProperties::builder().set_compression(Compression::SNAPPY).set_dictionary_enabled(false);
        for name in DICTIONARY_COLUMNS {
            props = props.set_column_dictionary_enabled(ColumnPath::from(name), true);
        }
        let schema = Arc::new(export::schema(with_capture));
        let writer = ArrowWriter::try_new(BufWriter::with_capacity(1 << 20, file), schema, Some(props.build())).map_err(io_error)?;
        Ok(Self { writer, rows: 0 })
    }

    /// Append one batch as its own row group (nothing for an empty batch).
    pub fn write(&mut self, batch: &RecordBatch) -> io::Result<()> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        self.writer.write(batch).map_err(io_error)?;
        // One row group per batch, as before: the encoded group leaves memory at once instead
        // of up to a million rows being buffered.
        self.writer.flush().map_err(io_error)?;
        self.rows += batch.num_rows() as u64;
        Ok(())
    }

    /// Rows written so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Write the footer and flush the file to the OS.
    pub fn close(self) -> io::Result<u64> {
        let rows = self.rows;
        let mut writer = self.writer;
        writer.finish().map_err(io_error)?;
        // The footer sits in the buffer: flush it here, where an error is seen (a dropped
        // BufWriter swallows it).
        io::Write::flush(writer.inner_mut())?;
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::{Method, Samples};
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
        let mut w = SampleParquet::create(&path, true).unwrap();
        w.write(&export::record_batch(&rows(10), Some("a.pcap"))).unwrap();
        w.write(&export::record_batch(&Samples::default(), Some("a.pcap"))).unwrap();
        w.write(&export::record_batch(&rows(7), Some("b.pcap"))).unwrap();
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
        assert!(encodings("method") && encodings("conn") && encodings("capture"));
        assert!(!encodings("rtt") && !encodings("time"));
        assert_eq!(group.column(1).compression(), Compression::SNAPPY);

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
        assert_eq!(SampleParquet::create(&path, false).unwrap().close().unwrap(), 0);
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
        let mut w = SampleParquet::create(Path::new("/dev/full"), false).unwrap();
        let big = rows(200_000);
        let err = w.write(&export::record_batch(&big, None)).and_then(|_| w.close().map(|_| ()));
        assert_eq!(err.unwrap_err().raw_os_error(), Some(28)); // ENOSPC
    }
}
