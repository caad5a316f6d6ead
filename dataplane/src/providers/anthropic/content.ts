/** Canonical content parts → Anthropic content blocks (user, system and tool_result side). */
import { GatewayError } from '../../errors.ts';
import type { ContentPart, ImagePart, OtherPart, TextPart } from '../../formats/openai/types.ts';
import type {
  AnthropicDocumentBlock,
  AnthropicImageBlock,
  AnthropicTextBlock,
} from '../../formats/anthropic/types.ts';
import { isRecord, withCacheControl } from '../../formats/anthropic/util.ts';

export type InputBlock = AnthropicTextBlock | AnthropicImageBlock | AnthropicDocumentBlock;

export interface DataUrl {
  mediaType: string;
  data: string;
}

/** `data:<mime>[;param...];base64,<data>`; Anthropic only takes base64 payloads. */
export function parseDataUrl(url: string): DataUrl | undefined {
  const match = /^data:([^;,]+)((?:;[^;,]*)*);base64,(.*)$/s.exec(url);
  if (match === null) return undefined;
  return { mediaType: (match[1] ?? '').toLowerCase(), data: match[3] ?? '' };
}

const isText = (part: ContentPart): part is TextPart => part.type === 'text' && typeof part.text === 'string';
const isImage = (part: ContentPart): part is ImagePart =>
  part.type === 'image_url' && isRecord(part['image_url']) && typeof part['image_url']['url'] === 'string';

const unsupported = (where: string, what: string): GatewayError =>
  new GatewayError('invalid_request_error', `${where}: ${what} is not supported by Anthropic models`, {
    param: where,
  });

/** An `image_url` part: data URLs become base64 sources (PDF → document), http(s) URL sources. */
function imageBlock(part: ImagePart, where: string): AnthropicImageBlock | AnthropicDocumentBlock {
  const url = part.image_url.url;
  const cache = withCacheControl(part);
  const inline = parseDataUrl(url);
  if (inline !== undefined) {
    if (inline.mediaType === 'application/pdf') {
      return {
        type: 'document',
        source: { type: 'base64', media_type: inline.mediaType, data: inline.data },
        ...cache,
      };
    }
    return {
      type: 'image',
      source: { type: 'base64', media_type: inline.mediaType, data: inline.data },
      ...cache,
    };
  }
  if (/^https?:\/\//i.test(url)) return { type: 'image', source: { type: 'url', url }, ...cache };
  throw unsupported(where, 'an image URL that is neither http(s) nor a base64 data URL');
}

/** OpenAI `file` part with inline `file_data` (a PDF data URL); file ids need OpenAI's store. */
function fileBlock(part: OtherPart, where: string): AnthropicDocumentBlock {
  const file = part['file'];
  const data =
    isRecord(file) && typeof file['file_data'] === 'string' ? parseDataUrl(file['file_data']) : undefined;
  if (data === undefined || data.mediaType !== 'application/pdf')
    throw unsupported(where, 'a file part other than an inline PDF');
  const title = isRecord(file) && typeof file['filename'] === 'string' ? { title: file['filename'] } : {};
  return {
    type: 'document',
    source: { type: 'base64', media_type: data.mediaType, data: data.data },
    ...title,
    ...withCacheControl(part),
  };
}

/**
 * One canonical part → one Anthropic block; `undefined` for parts that carry nothing (empty
 * text, which Anthropic rejects). A `document` part is an Anthropic block the client format
 * passed through verbatim (URL or text documents, citations) and goes back unchanged.
 * Anything else (audio, ...) has no Anthropic equivalent: refused rather than silently lost.
 */
export function partToBlock(part: ContentPart, where: string): InputBlock | undefined {
  if (isText(part))
    return part.text === '' ? undefined : { type: 'text', text: part.text, ...withCacheControl(part) };
  if (isImage(part)) return imageBlock(part, where);
  const other = part as OtherPart;
  if (other.type === 'file') return fileBlock(other, where);
  if (other.type === 'document' && isRecord(other['source']))
    return other as unknown as AnthropicDocumentBlock;
  throw unsupported(`${where}.type`, `content part type '${part.type}'`);
}

export function contentToBlocks(
  content: string | ContentPart[] | null | undefined,
  where: string,
): InputBlock[] {
  if (content === null || content === undefined) return [];
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  const blocks: InputBlock[] = [];
  content.forEach((part, i) => {
    const block = partToBlock(part, `${where}[${i}]`);
    if (block !== undefined) blocks.push(block);
  });
  return blocks;
}

/** Text only: system prompts and assistant turns cannot hold images in Anthropic's format. */
export function textBlocks(content: string | ContentPart[] | null | undefined): AnthropicTextBlock[] {
  if (content === null || content === undefined) return [];
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  return content
    .filter(isText)
    .filter((part) => part.text !== '')
    .map((part) => ({ type: 'text', text: part.text, ...withCacheControl(part) }));
}
