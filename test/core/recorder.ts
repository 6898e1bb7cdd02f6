/**
 * A CommandContext whose ReplyChannel records what a platform would show (messages, edits
 * applied in place, ephemeral sentences, deferrals): for core tests without an adapter.
 */
import { pino } from 'pino';
import type { Attachment, CommandContext, MessageHandle, OutgoingMessage } from '../../src/core/platform.ts';

/** What {@link recorder} returns. */
export interface Recorder {
  ctx: CommandContext;
  /** Every message sent, each showing its latest edit. */
  messages: Array<{ content: string; files: OutgoingMessage['files']; imageLinks: OutgoingMessage['imageLinks'] }>;
  ephemerals: string[];
  /** How many times `defer()` was called. */
  deferred(): number;
}

/**
 * Builds a context for one invocation in `conversationId` with raw `options` (and attachments).
 * Edits apply at once (`minEditIntervalMs` 0); Discord's 2,000-character limit.
 */
export function recorder(conversationId: string, options: Record<string, string | boolean | number>, attachments: Attachment[] = []): Recorder {
  const messages: Recorder['messages'] = [];
  const ephemerals: string[] = [];
  let deferred = 0;
  const ctx: CommandContext = {
    platform: 'discord',
    conversationId,
    user: { id: 'u1', name: 'ada', isAdmin: false },
    options,
    attachments,
    signal: new AbortController().signal,
    log: pino({ level: 'silent' }),
    reply: {
      limits: { maxChars: 2000, minEditIntervalMs: 0 },
      defer: async () => void deferred++,
      send: async (m): Promise<MessageHandle> => {
        const index = messages.push({ content: m.content, files: m.files, imageLinks: m.imageLinks }) - 1;
        return { edit: async (e) => void (messages[index]!.content = e.content) };
      },
      sendEphemeral: async (t) => void ephemerals.push(t),
    },
  };
  return { ctx, messages, ephemerals, deferred: () => deferred };
}
