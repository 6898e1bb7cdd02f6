/** Slack's message sizes and edit pace as the core's ReplyLimits (docs/platform-limits.md). */
import { markdownPageBreaks } from '../../core/markdown/page-breaks.ts';
import type { ReplyLimits } from '../../core/platform.ts';
import { slackLength } from './text.ts';

/** Slack's message limits (sizes and edit pace) as the core needs them (docs/platform-limits.md). Not its rate budgets: rate-limits.ts. */
export const SLACK_MESSAGE_LIMITS: ReplyLimits = {
  /** `msg_too_long` appears near 4,000 characters in practice; keep a margin. */
  maxChars: 3900,
  /** chat.update is tier 3 (~50/min per workspace): about one edit a second per stream. */
  minEditIntervalMs: 1000,
  measure: slackLength,
  /** Each message renders its own Markdown (markdown.ts): pages end at blocks' ends, a table's header carried. */
  pageBreaks: markdownPageBreaks,
  /** 40 field sections + a header, description, footer and actions stay within 50 blocks; long lists roll over. */
  cards: { maxFields: 40, maxChars: 100_000, maxValueChars: 2900, paging: 'messages' },
};
