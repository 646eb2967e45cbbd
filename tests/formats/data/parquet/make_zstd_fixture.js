// Writes zstd_rust.parquet and zstd_rust.expected.jsonl in this folder with another writer than
// Spark's parquet-mr: parquet-wasm, the Rust `parquet` crate compiled to WebAssembly, whose pages
// are ZSTD-compressed (parquet-mr 1.10 in Spark 2.4 cannot write ZSTD without Hadoop's native
// codec). Regenerate (Node.js; the packages come from the npm registry):
//
//   cd "$(mktemp -d)" && npm install parquet-wasm@0.6.1 apache-arrow@15 &&
//     node /path/to/tests/formats/data/parquet/make_zstd_fixture.js
//
// Columns: label double, x double, e list<double> (2 per row), id string; 60 rows in row groups
// of 25, with small data pages, so that chunks hold several pages.
const fs = require('fs');
const path = require('path');
const arrow = require(require.resolve('apache-arrow', {paths: [process.cwd()]}));
const pw = require(require.resolve('parquet-wasm/node', {paths: [process.cwd()]}));

const n = 60;
const rows = [];
for (let i = 0; i < n; i++) {
  rows.push({label: i % 3, x: i * 0.5 - 7.25, e: [i * 0.125, -i * 2.0], id: 'z' + (i * 7)});
}
const table = new arrow.Table({
  label: arrow.vectorFromArray(rows.map((r) => r.label), new arrow.Float64()),
  x: arrow.vectorFromArray(rows.map((r) => r.x), new arrow.Float64()),
  e: arrow.vectorFromArray(rows.map((r) => r.e),
                           new arrow.List(new arrow.Field('item', new arrow.Float64(), true))),
  id: arrow.vectorFromArray(rows.map((r) => r.id), new arrow.Utf8()),
});
const props = new pw.WriterPropertiesBuilder()
                  .setCompression(pw.Compression.ZSTD)
                  .setMaxRowGroupSize(25)
                  .setDataPageSizeLimit(128)
                  .setWriteBatchSize(8)
                  .setCreatedBy('parquet-wasm 0.6.1 (make_zstd_fixture.js)')
                  .build();
const bytes = pw.writeParquet(pw.Table.fromIPCStream(arrow.tableToIPC(table, 'stream')), props);
fs.writeFileSync(path.join(__dirname, 'zstd_rust.parquet'), bytes);
fs.writeFileSync(path.join(__dirname, 'zstd_rust.expected.jsonl'),
                 rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
console.log('wrote zstd_rust.parquet: ' + bytes.length + ' bytes, ' + n + ' rows');
