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
  messages: Array<{
    content: string;
    files: OutgoingMessage['files'];
    imageLinks: OutgoingMessage['imageLinks'];
    buttons?: OutgoingMessage['buttons'];
  }>;
  /** The text of each ephemeral message. */
  ephemerals: string[];
  /** Each ephemeral message whole (cards, buttons). */
  ephemeralMessages: OutgoingMessage[];
  /** How many times `defer()` was called. */
  deferred(): number;
}

/**
 * Builds a context for one invocation in `conversationId` (also its channel key) with raw
 * `options`, attachment options' `files`, and an admin or not.
 * Edits apply at once (`minEditIntervalMs` 0); Discord's 2,000-character limit.
 */
export function recorder(
  conversationId: string,
  options: Record<string, string | boolean | number>,
  extra: {
    files?: Record<string, Attachment>;
    admin?: boolean;
    channelKey?: string;
    directMessage?: boolean;
    userId?: string;
  } = {},
): Recorder {
  const messages: Recorder['messages'] = [];
  const ephemerals: string[] = [];
  const ephemeralMessages: OutgoingMessage[] = [];
  let deferred = 0;
  const ctx: CommandContext = {
    platform: 'discord',
    conversationId,
    channelKey: extra.channelKey ?? conversationId,
    isDirectMessage: extra.directMessage ?? false,
    user: {
      id: extra.userId ?? 'u1',
      name: 'ada',
      isAdmin: async () => extra.admin === true,
      canManageMessages: async () => extra.admin === true,
    },
    options,
    files: extra.files ?? {},
    signal: new AbortController().signal,
    log: pino({ level: 'silent' }),
    ref: 'TESTREF',
    reply: {
      limits: {
        maxChars: 2000,
        minEditIntervalMs: 0,
        cards: { maxFields: 25, maxChars: 6000, maxValueChars: 1024, paging: 'buttons' },
      },
      defer: async () => void deferred++,
      send: async (m): Promise<MessageHandle> => {
        const index =
          messages.push({
            content: m.content,
            files: m.files,
            imageLinks: m.imageLinks,
            ...(m.buttons ? { buttons: m.buttons } : {}),
          }) - 1;
        return {
          edit: async (e) => {
            const message = messages[index]!;
            message.content = e.content;
            if (e.files) message.files = e.files;
            if (e.buttons) message.buttons = e.buttons;
          },
        };
      },
      sendEphemeral: async (m) => {
        const message = typeof m === 'string' ? { content: m } : m;
        ephemeralMessages.push(message);
        ephemerals.push(message.content);
      },
    },
  };
  return { ctx, messages, ephemerals, ephemeralMessages, deferred: () => deferred };
}
