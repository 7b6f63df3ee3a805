import { loadModel } from '/work/main/electron/worker/runtime/binding.js';
const model = await loadModel({ dir: process.argv[2]!, weights: 'int4', backend: 'cpu', threads: 2, maxContext: 400 });
const vocab = model.info().vocabSize;
const prompt = Array.from({ length: 16 }, (_, i) => (100 + i * 7919) % vocab);
const out = await model.generate({ prompts: [prompt], maxNewTokens: Number(process.argv[3] ?? 40), stopTokens: [] });
console.log(JSON.stringify({ decode: out.results[0]!.decodeTokensPerSecond, ttft: out.results[0]!.timeToFirstTokenMs, isa: model.info().cpuIsa }));
model.close();
