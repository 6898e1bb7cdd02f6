/**
 * `/usage [channel] [feedback] [spend]`: what you have used against your quotas (chat requests
 * this minute, images and tokens today, and when each window rolls over) and, with a price table,
 * what you spent today and this month against the spending caps; admins may ask for the
 * channel's use today instead, for the 👍 / 👎 on the bot's answers here (the server or
 * workspace) summed per model, or for the server's spend this month per model. Shown only to
 * the user who asked.
 */
import type { Command } from '../src/core/command.ts';
import { texts } from '../src/core/command-words.ts';
import { ForbiddenError } from '../src/core/errors.ts';
import { feedbackCard } from '../src/core/features/feedback-report.ts';
import { spendCard, spendFields } from '../src/core/features/spend-report.ts';
import { subjectOf } from '../src/core/features/usage.ts';
import { type UsageLine, type UsageReport, waitText } from '../src/core/state/quotas.ts';

function line(item: UsageLine): string {
  const used = `${item.used}${item.limit > 0 ? ` of ${item.limit}` : ''} ${item.window === 'minute' ? 'this minute' : 'today'}`;
  return item.used > 0 && item.resetInMs > 0 ? `${used} (resets ${waitText(item.resetInMs)})` : used;
}

function fields(report: UsageReport) {
  return [
    { name: 'chat requests', value: line(report.chat) },
    { name: 'images', value: line(report.images) },
    { name: 'tokens', value: line(report.tokens) },
  ];
}

export default {
  name: 'usage',
  ...texts('commands.command.usage'),
  options: [
    { name: 'channel', ...texts('commands.command.usage.options.channel'), type: 'boolean' },
    { name: 'feedback', ...texts('commands.command.usage.options.feedback'), type: 'boolean' },
    { name: 'spend', ...texts('commands.command.usage.options.spend'), type: 'boolean' },
  ],
  examples: ['', '--channel', '--feedback', '--spend'],
  async execute(ctx, core) {
    if (ctx.options.feedback === true) {
      if (!(await ctx.user.isAdmin())) throw new ForbiddenError('Only admins can see the feedback on answers.');
      const card = await feedbackCard(core.store, ctx.channelKey, ctx.reply.limits.cards);
      await ctx.reply.sendEphemeral({ content: '', cards: [card] });
      return;
    }
    if (ctx.options.spend === true) {
      if (!(await ctx.user.isAdmin())) throw new ForbiddenError("Only admins can see the server's spend.");
      await ctx.reply.sendEphemeral({ content: '', cards: [await spendCard(ctx, core)] });
      return;
    }
    if (ctx.options.channel === true) {
      if (!(await ctx.user.isAdmin())) throw new ForbiddenError("Only admins can see a channel's use.");
      const report = await core.quotas.usageOfChannel(ctx.channelKey);
      await ctx.reply.sendEphemeral({
        content: '',
        cards: [
          {
            title: 'Use of this channel today',
            fields: [...fields(report), ...(await spendFields(core, 'channel', ctx.channelKey))],
            footer: 'Quotas apply per user; this is everyone here together.',
          },
        ],
      });
      return;
    }
    const report = await core.quotas.usageOf(subjectOf(ctx));
    const footer = core.quotas.enabled
      ? // Rights that could not be checked are not claimed here: the general footer.
        (await ctx.user.isAdmin().catch(() => false)) && !core.quotas.limits.admins
        ? 'As an admin you are not held to the quotas.'
        : 'Limits reset when each window rolls over.'
      : 'No quotas are set on this bot.';
    const spent = await spendFields(core, 'user', subjectOf(ctx));
    await ctx.reply.sendEphemeral({
      content: '',
      cards: [{ title: 'Your use', fields: [...fields(report), ...spent], footer }],
    });
  },
} satisfies Command;
