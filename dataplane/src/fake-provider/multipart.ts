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
  for (const [name, value] of form.entries())
    out[name] =
      typeof value === 'string' ? value : { filename: value.name, type: value.type, size: value.size };
  return out;
}

export const isFileInfo = (v: unknown): v is UploadedFileInfo =>
  typeof v === 'object' && v !== null && typeof (v as UploadedFileInfo).size === 'number';
