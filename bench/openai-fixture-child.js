// The OpenAI-compatible fixture of `bench/coupons-ai.js` in a process of its own, so the provider's
// work (parsing requests, building answers) is not charged to the cashtrack process being measured.
// Talks to its parent over IPC: {type: 'reset', delayMs} → {type: 'ok'}; {type: 'stats'} →
// {type: 'stats', maxInFlight, requests}; {type: 'close'}.
const { startOpenAiFixture } = await import('../dist/test/fixtures/openai-server.js');
const fixture = await startOpenAiFixture();
process.on('message', async (m) => {
  if (m.type === 'reset') {
    fixture.reset();
    fixture.delayMs = m.delayMs;
    process.send({ type: 'ok' });
  } else if (m.type === 'stats') {
    process.send({ type: 'stats', maxInFlight: fixture.maxInFlight, requests: fixture.requests.length });
  } else if (m.type === 'close') {
    await fixture.close();
    process.exit(0);
  }
});
process.send({ type: 'ready', baseUrl: fixture.baseUrl });
