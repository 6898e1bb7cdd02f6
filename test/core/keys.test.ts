/**
 * The keys built from platform ids (src/core/keys.ts): their stored formats (history, settings
 * and counters outlive a restart, so these never change) and that a conversation key reads back.
 */
import { describe, expect, it } from 'vitest';
import {
  bucketKey,
  buttonId,
  type ConversationRef,
  channelKey,
  conversationKey,
  parseButtonId,
  parseConversationKey,
  parsePostedImageRef,
  postedImageRef,
  quotaSubject,
  slackClaims,
  slackInstallationId,
  storeKeys,
  workspaceOf,
} from '../../src/core/keys.ts';

describe('keys', () => {
  it('builds conversation and channel keys in their stored formats, and reads conversation keys back', () => {
    const refs: Array<[ConversationRef, string, string]> = [
      [{ platform: 'discord', guild: '111', channel: '222' }, 'discord:111:222', 'discord:111:222'],
      [{ platform: 'discord', guild: undefined, channel: '333' }, 'discord:dm:333', 'discord:dm:333'],
      // A user install's conversation (the bot not a member there): its user's own, apart from the guild's.
      [
        { platform: 'discord', guild: undefined, user: '444', channel: '222' },
        'discord:user:444:222',
        'discord:user:444:222',
      ],
      [{ platform: 'slack', team: 'T1', channel: 'C1' }, 'slack:T1:C1', 'slack:T1:C1'],
      [
        { platform: 'slack', team: 'T1', channel: 'C1', thread: '1700000000.000100' },
        'slack:T1:C1:1700000000.000100',
        'slack:T1:C1',
      ],
    ];
    for (const [ref, conversation, channel] of refs) {
      expect(conversationKey(ref)).toBe(conversation);
      expect(channelKey(ref)).toBe(channel);
      expect(parseConversationKey(conversation)).toEqual(
        ref.platform === 'slack' && !ref.thread ? { platform: 'slack', team: ref.team, channel: ref.channel } : ref,
      );
    }
    for (const bad of [
      '',
      'discord',
      'discord:1',
      'discord:1:2:3',
      'discord:user:4',
      'discord:user:4:2:1',
      'teams:1:2',
      'slack:T1:C1:1.2:x',
    ])
      expect(parseConversationKey(bad)).toBeUndefined();
  });

  it("builds the store's and the claims' keys in their stored formats", () => {
    expect(storeKeys.history('slack:T1:C1')).toBe('history:slack:T1:C1');
    expect(storeKeys.settings('discord:1:2')).toBe('settings:discord:1:2');
    expect(storeKeys.claim('slack:event:Ev1')).toBe('claim:slack:event:Ev1');
    expect(storeKeys.quota('tokens', 'discord:42')).toBe('quota:tokens:discord:42');
    expect(storeKeys.usage('image', 'slack:T1:C1')).toBe('usage:image:slack:T1:C1');
    expect(storeKeys.imagineState('abc')).toBe('imagine:abc');
    expect(storeKeys.stopRequest('abc')).toBe('stop:abc');
    expect(storeKeys.startStreams('T1')).toBe('slack:startStream:T1');
    expect(storeKeys.openedThread('discord:G1:T9')).toBe('thread:discord:G1:T9');
    expect(storeKeys.budgetSlots('discord:channel:9')).toBe('budget:slots:discord:channel:9');
    expect(storeKeys.budgetState('slack:update:T1')).toBe('budget:state:slack:update:T1');
    expect(storeKeys.budgetRunning('discord:writes:9')).toBe('budget:running:discord:writes:9');
    expect(storeKeys.instances()).toBe('instances');
    expect(storeKeys.answerState('abc')).toBe('answer:abc');
    expect(storeKeys.userAnswerStates('slack:U1')).toBe('answer-states:user:slack:U1');
    expect(storeKeys.conversationAnswerStates('slack:T1:C1:1.2')).toBe('answer-states:conversation:slack:T1:C1:1.2');
    expect(storeKeys.forgotten('discord:G1:9')).toBe('forgotten:discord:G1:9');
    expect(slackClaims.event('Ev1')).toBe('slack:event:Ev1');
    expect(slackClaims.message('T1', 'C1', '1.2')).toBe('slack:message:T1:C1:1.2');
    expect(slackClaims.request('ab12', '1700000000')).toBe('slack:request:ab12:1700000000');
    expect(storeKeys.viewedChannel('T1', 'U1')).toBe('viewed:slack:T1:U1');
    expect(storeKeys.settingsChannels('slack:T1')).toBe('settings-channels:slack:T1');
    expect(slackClaims.greeting('T1', 'U1')).toBe('slack:greeting:T1:U1');
    expect(slackClaims.threadTitle('T1', 'D1', '1.2')).toBe('slack:title:T1:D1:1.2');
  });

  it("reads a channel key's workspace: a Slack team, a Discord guild or DMs", () => {
    expect(workspaceOf('slack:T1:C1')).toBe('slack:T1');
    expect(workspaceOf('slack:T1:C1:1.2')).toBe('slack:T1');
    expect(workspaceOf('discord:G1:42')).toBe('discord:G1');
    expect(workspaceOf('discord:dm:42')).toBe('discord:dm');
    expect(workspaceOf('discord:user:7:42')).toBe('discord:user:7');
    expect(workspaceOf('c1')).toBeUndefined();
  });

  it('builds button ids in the format the presses are routed by, and reads them back', () => {
    expect(buttonId('imagine', 'reroll', 'a1b2')).toBe('imagine:reroll:a1b2');
    expect(buttonId('models', 2, 0)).toBe('models:2:0');
    expect(parseButtonId('stop:a1b2:U123')).toEqual({ command: 'stop', args: ['a1b2', 'U123'] });
    expect(parseButtonId(buttonId('models', 3, 1))).toEqual({ command: 'models', args: ['3', '1'] });
    expect(parseButtonId('')).toEqual({ command: '', args: [] });
  });

  it("builds posted images' references in their stored formats, and reads them back", () => {
    const discord = { platform: 'discord', channel: '1290000000000000001', message: '1290000000000000002' } as const;
    expect(postedImageRef(discord)).toBe('discord:1290000000000000001:1290000000000000002');
    expect(postedImageRef({ platform: 'slack', file: 'F0ABC' })).toBe('slack:F0ABC');
    expect(parsePostedImageRef(postedImageRef(discord))).toEqual(discord);
    expect(parsePostedImageRef('slack:F0ABC')).toEqual({ platform: 'slack', file: 'F0ABC' });
    // A user's attachment, named by its id within its message (Regenerate finds it again).
    const attachment = { ...discord, attachment: '1290000000000000003' };
    expect(postedImageRef(attachment)).toBe('discord:1290000000000000001:1290000000000000002:1290000000000000003');
    expect(parsePostedImageRef(postedImageRef(attachment))).toEqual(attachment);
    for (const bad of ['', 'slack:', 'slack:F1:F2', 'discord:1', 'discord:1:2:3:4', 'discord:1::3', 'teams:x'])
      expect(parsePostedImageRef(bad)).toBeUndefined();
  });

  it('refuses a button id the platforms would not take (over 100 characters) or could not read back (a part with ":")', () => {
    expect(() => buttonId('stop', 'x'.repeat(100))).toThrow(/100 characters/);
    expect(() => buttonId('imagine', 'a:b')).toThrow(/':'/);
  });

  it('names rate-limit buckets `<platform>:<kind>[:<scope>]` (the names docs/platform-limits.md uses)', () => {
    expect(bucketKey({ platform: 'discord', kind: 'global' })).toBe('discord:global');
    expect(bucketKey({ platform: 'discord', kind: 'channel', scope: '123' })).toBe('discord:channel:123');
    expect(bucketKey({ platform: 'discord', kind: 'webhook', scope: 'ab12cd34' })).toBe('discord:webhook:ab12cd34');
    expect(bucketKey({ platform: 'slack', kind: 'update', scope: 'T1' })).toBe('slack:update:T1');
    expect(bucketKey({ platform: 'slack', kind: 'appendStream', scope: 'T1' })).toBe('slack:appendStream:T1');
  });
});

describe('per-workspace keys (issue 40)', () => {
  it('counts a Slack user per workspace (slack:<team>:<user>) and a Discord user as before', () => {
    expect(quotaSubject('slack', 'U1', 'slack:T1:C1')).toBe('slack:T1:U1');
    expect(quotaSubject('slack', 'U1', 'slack:T2:C9:1700000000.000100')).toBe('slack:T2:U1');
    expect(quotaSubject('discord', '42', 'discord:7:8')).toBe('discord:42');
  });

  it('names an installation by workspace, or by enterprise for an org-wide install, as Bolt queries it', () => {
    expect(slackInstallationId({ teamId: 'T1', enterpriseId: 'E1', isEnterpriseInstall: false })).toBe('team:T1');
    expect(slackInstallationId({ teamId: 'T1', enterpriseId: 'E1', isEnterpriseInstall: true })).toBe('enterprise:E1');
    expect(
      slackInstallationId({ teamId: undefined, enterpriseId: undefined, isEnterpriseInstall: false }),
    ).toBeUndefined();
    expect(storeKeys.slackInstallation('team:T1')).toBe('slack-installation:team:T1');
  });
});
