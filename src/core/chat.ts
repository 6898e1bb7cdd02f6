/**
 * The chat feature: history + prompt → streamed chat completion (§4.1) → a reply edited in
 * place as tokens arrive → both turns appended to the conversation's history.
 */
import type { CommandContext } from './platform.ts';
import type { Core } from './core.ts';
import { StreamingReply, type Clock } from './streaming-reply.ts';
import { ShownError } from './command.ts';
import { ServiceError, userMessageOf } from './service/errors.ts';
import type { ChatMessage } from './service/schemas.ts';

/** A chat request from a user. */
export interface ChatRequest {
  prompt: string;
  /** Model id; the default model when absent. */
  model?: string;
}

/**
 * Answers `request` in `ctx`'s conversation, streaming the answer into the reply.
 * On success the user's and the assistant's turns are appended to the history; a failed
 * answer leaves the history as it was.
 * @throws ServiceError before any text arrived (runCommand tells the user ephemerally);
 *   ShownError when the stream broke after text was shown (the notice is appended there).
 */
export async function chat(ctx: CommandContext, core: Core, request: ChatRequest, clock?: Clock): Promise<void> {
  await ctx.reply.defer();
  const model = request.model ?? (await core.models.chatModel(ctx.signal));
  const history = await core.history.asChatMessages(ctx.conversationId);
  const messages: ChatMessage[] = [...history, { role: 'user', content: request.prompt }];

  const stream = await core.service.chat.completions.create({ model, messages, stream: true }, { signal: ctx.signal });
  const reply = new StreamingReply(ctx.reply, { log: ctx.log, ...(clock ? { clock } : {}) });
  let finishReason: string | null | undefined;
  try {
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      const delta = choice?.delta?.content;
      if (delta) reply.append(delta);
      if (choice?.finish_reason) finishReason = choice.finish_reason;
    }
  } catch (error) {
    if (reply.content === '' || !(error instanceof ServiceError)) throw error;
    await reply.finish(`${reply.content}\n\n⚠️ ${userMessageOf(error)}`);
    throw new ShownError(error);
  }
  const answer = reply.content;
  await reply.finish();
  ctx.log.debug({ model, finishReason, chars: answer.length, messages: reply.messageCount, writes: reply.writes }, 'chat answered');
  const at = Date.now();
  await core.history.append(
    ctx.conversationId,
    { role: 'user', content: request.prompt, at, userId: ctx.user.id },
    { role: 'assistant', content: answer, at },
  );
}
