// A real llama.cpp client for the tests: node-llama-cpp (its prebuilt libraries, CPU only) chatting through one
// LlamaChatSession, as an app embedding llama.cpp does. Prints "ready PID" once the model is loaded, waits for a
// line "go" on stdin (so a tracer can attach first), runs PROMPTS prompts of at most MAX_TOKENS tokens each,
// prints one JSON line {"prompts", "generated"} (tokens node-llama-cpp reported generating), then waits for
// "exit" (so the tracer can finish while the process lives).
// Usage: node chat.mjs MODEL.gguf [PROMPTS] [MAX_TOKENS]
import { getLlama, LlamaChatSession } from "node-llama-cpp";
import readline from "node:readline";

const [modelPath, promptsArg = "3", maxTokensArg = "24"] = process.argv.slice(2);
const prompts = Number(promptsArg);
const maxTokens = Number(maxTokensArg);
const lines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const waitFor = async (word) => {
  for (;;) {
    const { value, done } = await lines.next();
    if (done) process.exit(3);
    if (value.trim() === word) return;
  }
};

const llama = await getLlama({ gpu: false, build: "never", logLevel: "error" });
const model = await llama.loadModel({ modelPath });
const context = await model.createContext({ threads: 2, contextSize: 2048 });
const session = new LlamaChatSession({ contextSequence: context.getSequence() });
console.log(`ready ${process.pid}`);
await waitFor("go");
let generated = 0;
for (let i = 0; i < prompts; i++) {
  await session.prompt(`Tell me story number ${i + 1}.`, {
    maxTokens,
    onToken(tokens) { generated += tokens.length; },
  });
}
console.log(JSON.stringify({ prompts, generated }));
await waitFor("exit");
await context.dispose();
await model.dispose();
process.exit(0);
