/**
 * Audio through the official openai client: transcriptions in every response_format (priced
 * per second of the duration the upstream reports) and speech streamed through (priced per
 * input character), with the upload checks and the key's budget.
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FAKE_AUDIO_BYTES_PER_SECOND,
  FAKE_PNG,
  FAKE_SPEECH_BYTES_PER_CHAR,
} from '../../dataplane/src/fake-provider/openai-media.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-media-audio';
const PER_SECOND = 0.006;
const PER_CHARACTER = 0.000015;
const BUDGET = { limitUsd: 5, period: 'monthly' as const };
const UPLOAD_LIMIT = 256 * 1024;
const PRICING = {
  inputPerMillionTokens: 1,
  outputPerMillionTokens: 2,
  perSecond: PER_SECOND,
  perCharacter: PER_CHARACTER,
};

let stack: Stack;
let client: OpenAI;
let chargedMicros = 0;

beforeAll(async () => {
  stack = await startStack(
    ([url]) =>
      [
        deployment({
          name: 'audio-openai',
          model: 'whisper',
          upstreamModel: 'whisper-up',
          baseUrl: fakeBase(url!),
          capabilities: ['audio'],
          extra: { pricing: PRICING },
        }),
        deployment({ name: 'chat', model: 'chat', baseUrl: fakeBase(url!) }),
        tenant('acme'),
        apiKey('audio', KEY, 'acme', { budget: BUDGET }),
      ].join(''),
    { maxUploadBytes: UPLOAD_LIMIT },
  );
  client = new OpenAI({ apiKey: KEY, baseURL: stack.baseURL, maxRetries: 0 });
});
afterAll(() => stack.close());

function charged(headers: Headers): number {
  const micros = Math.round(Number(headers.get('x-gantry-cost')) * 1e6);
  chargedMicros += micros;
  return micros / 1e6;
}

/** An MP3-looking upload (ID3 tag) the fake hears as `seconds` long. */
const mp3 = (seconds: number) => {
  const data = Buffer.alloc(seconds * FAKE_AUDIO_BYTES_PER_SECOND);
  data.write('ID3', 0, 'latin1');
  return toFile(data, 'talk.mp3');
};

/** A PCM WAV whose header states FAKE_AUDIO_BYTES_PER_SECOND, so its length is known before the call. */
function wav(seconds: number): Promise<File> {
  const dataBytes = seconds * FAKE_AUDIO_BYTES_PER_SECOND;
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + dataBytes, 4);
  header.write('WAVEfmt ', 8, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(8000, 24);
  header.writeUInt32LE(FAKE_AUDIO_BYTES_PER_SECOND, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(dataBytes, 40);
  // The fake counts the whole file; keep the data a whole number of seconds after the header.
  return toFile(Buffer.concat([header, Buffer.alloc(dataBytes - 44)]), 'talk.wav');
}

describe('POST /v1/audio/transcriptions', () => {
  it('json: the text, charged for the seconds the upstream reports', async () => {
    const { data, response } = await client.audio.transcriptions
      .create({ model: 'whisper', file: await mp3(2) })
      .withResponse();
    expect(data.text).toBe('Fake transcription of talk.mp3.');
    expect(charged(response.headers)).toBeCloseTo(2 * PER_SECOND, 10);
    const sent = stack.fakes[0]!.requests.at(-1)!;
    expect(sent.path).toBe('/v1/audio/transcriptions');
    expect(sent.body).toMatchObject({ model: 'whisper-up', file: { size: 2 * FAKE_AUDIO_BYTES_PER_SECOND } });
  });

  it('verbose_json: duration and segments', async () => {
    const { data, response } = await client.audio.transcriptions
      .create({ model: 'whisper', file: await mp3(3), response_format: 'verbose_json' })
      .withResponse();
    expect(data).toMatchObject({ duration: 3, segments: [{ start: 0, end: 3 }] });
    expect(charged(response.headers)).toBeCloseTo(3 * PER_SECOND, 10);
  });

  it('srt and vtt: subtitles as text, charged to the last cue', async () => {
    const srt = await client.audio.transcriptions
      .create({ model: 'whisper', file: await mp3(2), response_format: 'srt' })
      .withResponse();
    expect(srt.data).toBe('1\n00:00:00,000 --> 00:00:02,000\nFake transcription of talk.mp3.\n\n');
    expect(charged(srt.response.headers)).toBeCloseTo(2 * PER_SECOND, 10);
    const vtt = await client.audio.transcriptions
      .create({ model: 'whisper', file: await mp3(4), response_format: 'vtt' })
      .withResponse();
    expect(vtt.data).toMatch(/^WEBVTT\n\n00:00:00\.000 --> 00:00:04\.000\n/);
    expect(vtt.response.headers.get('content-type')).toMatch(/^text\/vtt/);
    expect(charged(vtt.response.headers)).toBeCloseTo(4 * PER_SECOND, 10);
  });

  it('text: no duration in the answer, so the WAV header decides', async () => {
    const { data, response } = await client.audio.transcriptions
      .create({ model: 'whisper', file: await wav(2), response_format: 'text' })
      .withResponse();
    expect(data).toBe('Fake transcription of talk.wav.\n');
    expect(charged(response.headers)).toBeCloseTo(2 * PER_SECOND, 10);
  });

  it('refuses a non-audio file (400 naming it), an oversized one (413) and an unknown format', async () => {
    await expect(
      client.audio.transcriptions.create({ model: 'whisper', file: await toFile(FAKE_PNG, 'a.mp3') }),
    ).rejects.toMatchObject({
      status: 400,
      error: { param: 'file', message: expect.stringContaining('image/png') },
    });
    await expect(
      client.audio.transcriptions.create({ model: 'whisper', file: await mp3(17) }),
    ).rejects.toMatchObject({
      status: 413,
      error: { type: 'request_too_large', message: expect.stringContaining('256 KB') },
    });
    await expect(
      client.audio.transcriptions.create({
        model: 'whisper',
        file: await mp3(1),
        response_format: 'xml' as 'text',
      }),
    ).rejects.toMatchObject({ status: 400, error: { param: 'response_format' } });
    await expect(
      client.audio.transcriptions.create({ model: 'chat', file: await mp3(1) }),
    ).rejects.toMatchObject({
      status: 400,
      error: { type: 'unsupported_endpoint' },
    });
  });
});

describe('POST /v1/audio/speech', () => {
  it('streams the audio bytes through, charged per input character', async () => {
    const input = 'Hello from the gateway, spoken.';
    const { data, response } = await client.audio.speech
      .create({ model: 'whisper', input, voice: 'alloy' })
      .withResponse();
    expect(response.headers.get('content-type')).toBe('audio/mpeg');
    expect(charged(response.headers)).toBeCloseTo(input.length * PER_CHARACTER, 10);
    const reader = data.body!.getReader();
    const chunks: Uint8Array[] = [];
    for (let r = await reader.read(); !r.done; r = await reader.read()) chunks.push(r.value);
    const audio = Buffer.concat(chunks);
    expect(audio.length).toBe(input.length * FAKE_SPEECH_BYTES_PER_CHAR);
    expect(audio.toString('latin1', 0, 3)).toBe('ID3');
    expect(stack.fakes[0]!.requests.at(-1)!.body).toMatchObject({
      model: 'whisper-up',
      input,
      voice: 'alloy',
    });
  });

  it('answers the format asked for and refuses bad fields', async () => {
    const wavSpeech = await client.audio.speech.create({
      model: 'whisper',
      input: 'hi',
      voice: 'alloy',
      response_format: 'wav',
    });
    expect(wavSpeech.headers.get('content-type')).toBe('audio/wav');
    charged(wavSpeech.headers);
    expect((await wavSpeech.arrayBuffer()).byteLength).toBe(2 * FAKE_SPEECH_BYTES_PER_CHAR);
    await expect(
      client.audio.speech.create({ model: 'whisper', input: 'x'.repeat(4097), voice: 'alloy' }),
    ).rejects.toMatchObject({
      status: 400,
      error: { param: 'input', message: expect.stringContaining('4096') },
    });
  });
});

describe('money', () => {
  it("the key's budget spend is the sum of the charged costs", async () => {
    const state = await stack.gateway.stores.budgets.state(
      { tenant: 'acme', keyId: 'default/audio' },
      BUDGET,
    );
    expect(chargedMicros).toBeGreaterThan(0);
    expect(Math.round(state.spentUsd * 1e6)).toBe(chargedMicros);
  });
});
