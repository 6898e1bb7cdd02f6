/**
 * The `files.*` Web API methods: the upload flow that `filesUploadV2` runs —
 * `files.getUploadURLExternal` (announces a file, hands out an upload URL of this fake; the
 * bytes go there, see upload.ts) and `files.completeUploadExternal` (shares it in a channel or
 * thread, as a message of the bot) — and `files.info` (any file: the bot's uploads and users'
 * files, shared anywhere or nowhere, with its owner and where it is shared: file-shares.ts;
 * `file_not_found` otherwise).
 */
import { parseBlocks } from './blocks.ts';
import type { FakeSlackChannel } from './types.ts';
import type { MethodTable } from './web-api.ts';
import { isObject, type Json, jsonParam, required, SlackApiError, str } from './wire.ts';
import type { Workspace } from './workspace.ts';

export function fileMethods(ws: Workspace): MethodTable {
  return {
    'files.getUploadURLExternal': (p) => getUploadUrl(ws, p),
    'files.completeUploadExternal': (p) => completeUpload(ws, p),
    'files.info': (p) => {
      const file = ws.file(required(p, 'file', 'file_not_found'));
      if (!file?.completed) throw new SlackApiError('file_not_found');
      return { file: ws.fileObject(file), comments: [], response_metadata: { next_cursor: '' } };
    },
  };
}

function getUploadUrl(ws: Workspace, p: Json): Json {
  const filename = required(p, 'filename');
  const lengthText = required(p, 'length');
  const length = Number(lengthText);
  if (!Number.isInteger(length) || length <= 0) {
    throw new SlackApiError('invalid_arguments', {
      response_metadata: { messages: ['[ERROR] length must be a positive integer'] },
    });
  }
  const file = ws.addFile({
    origin: 'upload',
    filename,
    length,
    size: length,
    // Slack's docs name it `alt_txt`; @slack/web-api sends `alt_text`. Both are read.
    altText: str(p, 'alt_text') ?? str(p, 'alt_txt'),
    title: undefined,
    data: undefined,
    streamBytes: undefined,
    contentType: undefined,
    user: ws.botUserId,
    completed: false,
  });
  const id = file.id;
  return { upload_url: `${ws.baseUrl}/upload/${id}`, file_id: id };
}

/**
 * Shares uploaded files. Error names are the fake's choice where Slack's docs give none:
 * `file_not_found` for an unknown id, bytes that never arrived, or a second completion
 * (Slack: "this method can only be called once").
 */
function completeUpload(ws: Workspace, p: Json): Json {
  const list = jsonParam(p, 'files');
  if (!Array.isArray(list) || list.length === 0 || !list.every((f) => isObject(f) && typeof f.id === 'string')) {
    throw new SlackApiError('invalid_arguments', {
      response_metadata: { messages: ['[ERROR] files must be a JSON array of {"id","title"}'] },
    });
  }
  const files = list.map((entry: Json) => {
    const f = ws.files.get(entry.id as string);
    if (!f?.data || f.completed)
      throw new SlackApiError('file_not_found', {
        response_metadata: {
          messages: [`[ERROR] file ${String(entry.id)} is unknown, not uploaded, or already completed`],
        },
      });
    return { f, title: typeof entry.title === 'string' ? entry.title : undefined };
  });
  const channelRef = str(p, 'channel_id') ?? str(p, 'channels');
  let channel: FakeSlackChannel | undefined;
  let threadTs: string | undefined;
  const comment = str(p, 'initial_comment');
  let blocks: unknown[] | undefined;
  if (channelRef !== undefined && channelRef !== '') {
    channel = ws.channelOf({ channel: channelRef }, 'channel');
    ws.requireMember(channel);
    threadTs = ws.threadParent(channel.id, str(p, 'thread_ts'));
    // Slack ignores `blocks` when `initial_comment` is given.
    blocks = comment === undefined ? parseBlocks(p.blocks) : undefined;
    ws.checkText(comment, blocks, true);
  }
  for (const { f, title } of files) {
    f.completed = true;
    f.title = title;
  }
  if (channel) {
    const m = ws.storeMessage({
      channel: channel.id,
      user: ws.botUserId,
      botId: ws.botId,
      text: comment ?? '',
      blocks,
      threadTs,
      files: files.map(({ f }) => f.id),
      via: 'files.completeUploadExternal',
      method: 'files.completeUploadExternal',
    });
    for (const { f } of files) {
      f.channel = channel.id;
      f.threadTs = threadTs;
      f.messageTs = m.ts;
      f.shares.push({ channel: channel.id, ts: m.ts, threadTs });
    }
  }
  return { files: files.map(({ f }) => ws.fileObject(f)) };
}
