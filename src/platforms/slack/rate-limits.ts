/**
 * Slack's rate budgets as the write scheduler spends them (docs/platform-limits.md). The
 * workspace's chat.startStream count is kept apart, in the store (stream.ts SlackStreaming),
 * because a start never waits: without budget, the answer is posted instead.
 */

/**
 * Slack's budgets for the write scheduler, by bucket kind (docs/platform-limits.md):
 * `chat.postMessage` about one a second per channel, `chat.update` tier 3 (about 50 a minute per
 * workspace, shared by every answer streaming there). The per-minute edit budgets are spread evenly (`spacingMs`): spent
 * at once by many streams, they would leave every stream without an update for most of a minute.
 */
export const SLACK_BUDGETS = {
  post: { limit: 1, windowMs: 1_000 },
  update: { limit: 50, windowMs: 60_000, spacingMs: 60_000 / 50 },
  /** `chat.appendStream`: tier 4, 100+ a minute per workspace. */
  appendStream: { limit: 100, windowMs: 60_000, spacingMs: 60_000 / 100 },
};
