/**
 * multipart/form-data bodies for the media routes, parsed with the platform's own parser
 * (fetch's Response.formData). Files become `{filename, type, size}` records, so recorded
 * requests show what was uploaded without carrying the bytes.
 */
export interface UploadedFileInfo {
  filename: string;
  type: string;
  size: number;
}

export const isMultipart = (contentType: string | undefined): boolean =>
  /^multipart\/form-data\s*;/i.test(contentType ?? '');

export async function parseMultipart(
  raw: Buffer,
  contentType: string,
): Promise<Record<string, string | UploadedFileInfo> | undefined> {
  let form: FormData;
  try {
    form = await new Response(new Uint8Array(raw), { headers: { 'content-type': contentType } }).formData();
  } catch {
    return undefined;
  }
  const out: Record<string, string | UploadedFileInfo> = {};
  for (const [name, value] of form.entries()) {
    if (typeof value === 'string') {
      out[name] = value;
      continue;
    }
    const info: UploadedFileInfo = { filename: value.name, type: value.type, size: value.size };
    // The bytes ride along unlisted: the Files API keeps them, recorded requests do not show them.
    Object.defineProperty(info, 'data', { value: Buffer.from(await value.arrayBuffer()), enumerable: false });
    out[name] = info;
  }
  return out;
}

/** The bytes of an uploaded file (empty when the part carried none). */
export const fileBytes = (info: UploadedFileInfo): Buffer =>
  (info as UploadedFileInfo & { data?: Buffer }).data ?? Buffer.alloc(0);

export const isFileInfo = (v: unknown): v is UploadedFileInfo =>
  typeof v === 'object' && v !== null && typeof (v as UploadedFileInfo).size === 'number';
