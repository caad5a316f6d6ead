/** Route table for the OpenAI and Azure OpenAI paths (prefix-tolerant). */
import { asString } from './behaviour.ts';
import { extraOpenaiRoute } from './openai-extra.ts';
import { fineTuningRoute } from './fine-tuning.ts';
import { chatLogprobsCap, flavourOf, legacyLogprobsCap, type OpenaiFlavour } from './openai-caps.ts';
import { answerChat, validateChat } from './openai-chat.ts';
import { azureErrors, openaiErrors } from './openai-errors.ts';
import {
  answerCompletion,
  answerEmbeddings,
  answerModels,
  validateCompletion,
  validateEmbeddings,
} from './openai-misc.ts';
import { answerMedia, mediaEndpointOf, validateMedia, type MediaEndpoint } from './openai-media.ts';
import { videoRoute } from './openai-videos.ts';
import { filesRoute } from './openai-files.ts';
import { storesRoute } from './openai-stores.ts';
import type { ErrorReply, Route, RouteContext } from './types.ts';

type Endpoint = 'chat' | 'completions' | 'embeddings';

function header(ctx: Omit<RouteContext, 'body'>, name: string): string | undefined {
  const v = ctx.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function hasBearer(ctx: Omit<RouteContext, 'body'>): boolean {
  return /^Bearer\s+\S+/i.test(header(ctx, 'authorization') ?? '');
}

const validators: Record<
  Endpoint,
  (b: Record<string, unknown>, needModel: boolean) => ErrorReply | undefined
> = {
  chat: validateChat,
  completions: validateCompletion,
  embeddings: validateEmbeddings,
};

/** The flavour's numeric caps, checked after the shape: a real upstream names a missing field first. */
function capsOf(
  endpoint: Endpoint,
  body: Record<string, unknown>,
  flavour: OpenaiFlavour,
): ErrorReply | undefined {
  if (endpoint === 'chat') return chatLogprobsCap(body);
  if (endpoint === 'completions') return legacyLogprobsCap(body, flavour);
  return undefined;
}

function openai(endpoint: Endpoint, flavour: OpenaiFlavour): Route {
  return {
    errors: openaiErrors,
    authorized: hasBearer,
    validate: (ctx) => validators[endpoint](ctx.body, true) ?? capsOf(endpoint, ctx.body, flavour),
    describe: (ctx) => ({
      model: asString(ctx.body.model),
      stream: ctx.body.stream === true && endpoint !== 'embeddings',
    }),
    answer: (ctx, { usage }) => {
      const model = asString(ctx.body.model) ?? '';
      if (endpoint === 'chat') return answerChat(ctx.body, { azure: false, model }, usage);
      if (endpoint === 'completions') return answerCompletion(ctx.body, model, usage);
      return answerEmbeddings(ctx.body, model, usage);
    },
  };
}

function azure(endpoint: Endpoint, deployment: string): Route {
  return {
    errors: azureErrors,
    authorized: (ctx) => (header(ctx, 'api-key') ?? '').trim() !== '' || hasBearer(ctx),
    validate: (ctx) => {
      // Azure answers a call without api-version as an unknown resource.
      if (!ctx.url.searchParams.get('api-version')) {
        return { status: 404, body: { error: { code: '404', message: 'Resource not found' } } };
      }
      // Azure's legacy cap is not modelled: it keeps the one the fake gave it before flavours (20).
      return validators[endpoint](ctx.body, false) ?? capsOf(endpoint, ctx.body, 'vllm');
    },
    describe: (ctx) => ({ model: deployment, stream: ctx.body.stream === true && endpoint !== 'embeddings' }),
    answer: (ctx, { usage }) => {
      // The deployment decides the model; echo the body's model when the caller sent one.
      const model = asString(ctx.body.model) ?? deployment;
      if (endpoint === 'chat') return answerChat(ctx.body, { azure: true, model }, usage);
      if (endpoint === 'completions') return answerCompletion(ctx.body, model, usage);
      return answerEmbeddings(ctx.body, model, usage);
    },
  };
}

const modelsRoute: Route = {
  errors: openaiErrors,
  bodyless: true,
  authorized: hasBearer,
  describe: () => ({ model: undefined, stream: false }),
  answer: () => answerModels(),
};

function endpointOf(pathname: string): Endpoint | undefined {
  if (pathname.endsWith('/chat/completions')) return 'chat';
  if (pathname.endsWith('/completions')) return 'completions';
  if (pathname.endsWith('/embeddings')) return 'embeddings';
  return undefined;
}

/** Images, audio and videos: OpenAI and Azure differ only in credentials and the model's place. */
function media(endpoint: MediaEndpoint, azureDeployment: string | undefined): Route {
  return {
    errors: azureDeployment === undefined ? openaiErrors : azureErrors,
    authorized: (ctx) =>
      hasBearer(ctx) || (azureDeployment !== undefined && (header(ctx, 'api-key') ?? '').trim() !== ''),
    validate: (ctx) => validateMedia(endpoint, ctx.body, azureDeployment === undefined),
    describe: (ctx) => ({ model: azureDeployment ?? asString(ctx.body.model), stream: false }),
    answer: (ctx) => answerMedia(endpoint, ctx, asString(ctx.body.model) ?? azureDeployment ?? ''),
  };
}

export function openaiRoute(method: string, pathname: string): Route | undefined {
  if (method === 'GET' && pathname.endsWith('/models') && !pathname.includes('/v1beta/')) return modelsRoute;
  const fineTuning = fineTuningRoute(method, pathname, hasBearer, openaiErrors);
  if (fineTuning) return fineTuning;
  const video = videoRoute(method, pathname);
  if (video) return video;
  const stored = storesRoute(method, pathname) ?? filesRoute(method, pathname);
  if (stored) return stored;
  if (method !== 'POST') return undefined;
  const extra = extraOpenaiRoute(pathname, hasBearer, openaiErrors);
  if (extra) return extra;
  const mediaEndpoint = mediaEndpointOf(pathname);
  if (mediaEndpoint) {
    const deployment = /\/openai\/deployments\/([^/]+)\//.exec(pathname)?.[1];
    return media(mediaEndpoint, deployment === undefined ? undefined : decodeURIComponent(deployment));
  }
  const endpoint = endpointOf(pathname);
  if (!endpoint) return undefined;
  const az = /\/openai\/deployments\/([^/]+)\//.exec(pathname);
  if (az?.[1]) return azure(endpoint, decodeURIComponent(az[1]));
  return openai(endpoint, flavourOf(pathname));
}
