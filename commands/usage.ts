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
import { subjectOf, waitSentence } from '../src/core/features/usage.ts';
import type { Words } from '../src/core/i18n/words.ts';
import type { UsageLine, UsageReport } from '../src/core/state/quotas.ts';

/** One counter in `words`: `3 of 10 this minute (resets in 42 s)`. */
function line(item: UsageLine, words: Words): string {
  const values = {
    used: item.used,
    limited: item.limit > 0 ? 'yes' : 'no',
    limit: item.limit,
    window: item.window,
  };
  return item.used > 0 && item.resetInMs > 0
    ? words.t('commands.usage.used_resets', { ...values, wait: waitSentence(item.resetInMs) })
    : words.t('commands.usage.used', values);
}

function fields(report: UsageReport, words: Words) {
  return [
    { name: words.t('commands.usage.chat_requests'), value: line(report.chat, words) },
    { name: words.t('commands.usage.images'), value: line(report.images, words) },
    { name: words.t('commands.usage.tokens'), value: line(report.tokens, words) },
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
    // Shown to the user alone: their words.
    const words = await core.languages.forUser(ctx);
    if (ctx.options.feedback === true) {
      if (!(await ctx.user.isAdmin())) throw new ForbiddenError('commands.usage.only_admins_feedback');
      const card = await feedbackCard(core.store, ctx.channelKey, ctx.reply.limits.cards);
      await ctx.reply.sendEphemeral({ content: '', cards: [card] });
      return;
    }
    if (ctx.options.spend === true) {
      if (!(await ctx.user.isAdmin())) throw new ForbiddenError('commands.usage.only_admins_spend');
      await ctx.reply.sendEphemeral({ content: '', cards: [await spendCard(ctx, core, words)] });
      return;
    }
    if (ctx.options.channel === true) {
      if (!(await ctx.user.isAdmin())) throw new ForbiddenError('commands.usage.only_admins_channel');
      const report = await core.quotas.usageOfChannel(ctx.channelKey);
      await ctx.reply.sendEphemeral({
        content: '',
        cards: [
          {
            title: words.t('commands.usage.channel_title'),
            fields: [...fields(report, words), ...(await spendFields(core, 'channel', ctx.channelKey, words))],
            footer: words.t('commands.usage.channel_footer'),
          },
        ],
      });
      return;
    }
    const report = await core.quotas.usageOf(subjectOf(ctx));
    const footer = core.quotas.enabled
      ? // Rights that could not be checked are not claimed here: the general footer.
        (await ctx.user.isAdmin().catch(() => false)) && !core.quotas.limits.admins
        ? words.t('commands.usage.footer_admin')
        : words.t('commands.usage.footer_quotas')
      : words.t('commands.usage.footer_none');
    const spent = await spendFields(core, 'user', subjectOf(ctx), words);
    await ctx.reply.sendEphemeral({
      content: '',
      cards: [{ title: words.t('commands.usage.title'), fields: [...fields(report, words), ...spent], footer }],
    });
  },
} satisfies Command;
