// onnxruntime (npm onnxruntime-node) on one model, for bench/models:
//   node bench/ort_run.js MODEL.onnx INPUT.npy THREADS WARMUP RUNS OUT.bin
// Runs with every graph optimization on, intra-op threads = THREADS, and prints one JSON
// line: session creation time, per-run latencies (ms); writes the first output's
// float32 values to OUT.bin for the accuracy check.
const fs = require('fs');
const ort = require('onnxruntime-node');

function readNpy(path) {
  const buf = fs.readFileSync(path);
  const headerLen = buf.readUInt16LE(8);
  const header = buf.toString('latin1', 10, 10 + headerLen);
  if (!header.includes("'descr': '<f4'")) throw new Error(`${path}: only float32 .npy is supported`);
  const shape = header.match(/'shape': \(([^)]*)\)/)[1].split(',').filter(s => s.trim()).map(Number);
  const start = 10 + headerLen;
  const data = new Float32Array(buf.buffer.slice(buf.byteOffset + start, buf.byteOffset + buf.length));
  return new ort.Tensor('float32', data, shape);
}

async function main() {
  const [model, input, threads, warmup, runs, out] = process.argv.slice(2);
  const t0 = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(model, {
    graphOptimizationLevel: 'all', intraOpNumThreads: Number(threads), interOpNumThreads: 1,
    executionMode: 'sequential',
  });
  const createMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const feeds = {[session.inputNames[0]]: readNpy(input)};
  let result;
  for (let i = 0; i < Number(warmup); i++) result = await session.run(feeds);
  const samples = [];
  for (let i = 0; i < Number(runs); i++) {
    const s = process.hrtime.bigint();
    result = await session.run(feeds);
    samples.push(Number(process.hrtime.bigint() - s) / 1e6);
  }
  const y = result[session.outputNames[0]].data;
  fs.writeFileSync(out, Buffer.from(y.buffer, y.byteOffset, y.byteLength));
  console.log(JSON.stringify({create_ms: createMs, samples_ms: samples, rss_kib: Math.round(process.memoryUsage().rss / 1024)}));
}

main().catch(e => { console.error(`ort_run: ${e.message}`); process.exit(1); });
