/** `npm run fake-provider`: serve the fake provider on FAKE_PROVIDER_PORT (default 8090). */
import { startFakeProvider } from './server.ts';

const port = Number(process.env.FAKE_PROVIDER_PORT ?? 8090);
const host = process.env.FAKE_PROVIDER_HOST ?? '127.0.0.1';
const provider = await startFakeProvider({ port, host });
console.log(`fake provider listening on ${provider.url}`);
console.log(
  `  OpenAI base URL: ${provider.url}/v1   Anthropic: ${provider.url}   Gemini: ${provider.url}/v1beta`,
);
console.log(
  `  faults: POST ${provider.url}/_fake/faults (JSON array), reset: POST ${provider.url}/_fake/reset`,
);

const stop = (): void => {
  void provider.close().then(() => process.exit(0));
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
