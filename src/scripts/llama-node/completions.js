// An application that links llama.cpp statically, for the tests: @fugood/llama.node (llama.cpp inside its
// stripped, LTO-built index.node addon), CPU only. Loads MODEL.gguf, prints "ready PID", waits for a line "go" on
// stdin (so a tracer can attach first), runs COMPLETIONS completions of N_PREDICT tokens each with THREADS threads,
// prints one JSON line with the application's own per-request timings (prompt and generated tokens, as
// llama.node reports them) and their sums, then waits for "exit" (so the tracer can finish while the process lives).
// With START_AFTER_MS it reads no stdin: it loads the model that long after the addon (initLlama), runs at once
// and exits after its JSON line (a program launched under a tracer, whose stdin is not the tracer's: the tracer
// attaches while it waits, before the model load's first graph). Copied next to node_modules (require
// resolves from the script's directory).
// Usage: node completions.js MODEL.gguf [COMPLETIONS] [N_PREDICT] [THREADS] [START_AFTER_MS]
'use strict';
const { loadModel, initLlama } = require('@fugood/llama.node');
const readline = require('node:readline');

const [modelPath, completionsArg = '8', predictArg = '32', threadsArg = '2', startAfterArg] = process.argv.slice(2);
const startAfterMs = startAfterArg === undefined ? -1 : Number(startAfterArg);
const completions = Number(completionsArg);
const nPredict = Number(predictArg);
const threads = Number(threadsArg);
const lines = startAfterMs >= 0 ? null : readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const waitFor = async (word) => {
  for (;;) {
    const { value, done } = await lines.next();
    if (done) process.exit(3);
    if (value.trim() === word) return;
  }
};

(async () => {
  if (startAfterMs >= 0) {
    await initLlama(); // the addon is dlopen'ed here (the require alone does not load it)
    await new Promise((resolve) => setTimeout(resolve, startAfterMs));
  }
  const context = await loadModel({ model: modelPath, n_ctx: 2048, n_threads: threads, n_gpu_layers: 0 });
  console.log(`ready ${process.pid}`);
  if (startAfterMs < 0) {
    await waitFor('go');
  }
  const requests = [];
  for (let i = 0; i < completions; i++) {
    const result = await context.completion({
      prompt: `Tell me story number ${i + 1}.`, n_predict: nPredict, temperature: 0, n_threads: threads,
    });
    requests.push({ prompt_n: result.timings.prompt_n, predicted_n: result.timings.predicted_n,
      prompt_ms: result.timings.prompt_ms, predicted_ms: result.timings.predicted_ms });
  }
  const sum = (key) => requests.reduce((total, r) => total + r[key], 0);
  console.log(JSON.stringify({ completions, prompt_tokens: sum('prompt_n'), generated_tokens: sum('predicted_n'),
    requests }));
  if (startAfterMs < 0) {
    await waitFor('exit');
  }
  await context.release();
  process.exit(0);
})().catch((e) => { console.error(`completions.js: ${e && e.message ? e.message : e}`); process.exit(2); });
