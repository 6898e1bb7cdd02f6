/**
 * `POST /upload/<file_id>`: the `upload_url` that `files.getUploadURLExternal` hands out. Takes
 * the raw bytes, or a multipart form with one file part (what @slack/web-api's `filesUploadV2`
 * sends: a part named `body`); the byte count must equal the declared `length` (HTTP 400
 * otherwise). No token needed (the URL is the secret), as on Slack. Every request is recorded
 * in `uploads`, refused ones too.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Workspace } from './workspace.ts';

export async function handleUpload(
  ws: Workspace,
  fileId: string,
  req: IncomingMessage,
  raw: Buffer,
  res: ServerResponse,
): Promise<void> {
  const file = ws.files.get(fileId);
  const refuse = (status: number, text: string) => {
    ws.uploads.push({ fileId, status, bytes: raw.length, at: ws.now(), seq: ws.nextSeq() });
    res.writeHead(status, { 'content-type': 'text/plain' });
    res.end(text);
  };
  if (!file) return refuse(404, 'upload url not found');
  if (file.data) return refuse(400, 'file already uploaded');
  let data = raw;
  let contentType = req.headers['content-type'];
  if (contentType?.toLowerCase().startsWith('multipart/form-data')) {
    const form = await new Request(`${ws.baseUrl}/upload/${fileId}`, {
      method: 'POST',
      headers: { 'content-type': contentType },
      body: raw,
    }).formData();
    const parts = [...form.values()].filter((v): v is File => typeof v !== 'string');
    if (parts.length !== 1) return refuse(400, `expected one file part, got ${parts.length}`);
    data = Buffer.from(await parts[0]!.arrayBuffer());
    contentType = parts[0]!.type || undefined;
  }
  if (data.length !== file.length)
    return refuse(400, `length mismatch: declared ${file.length} bytes, received ${data.length}`);
  file.data = data;
  file.contentType = contentType;
  ws.uploads.push({ fileId, status: 200, bytes: data.length, at: ws.now(), seq: ws.nextSeq() });
  res.writeHead(200, { 'content-type': 'text/plain' });
  res.end(`OK - ${data.length}`);
}
