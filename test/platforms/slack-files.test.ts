/**
 * Where the Slack bot token may go (slackFileHost): https on port 443 to Slack's file hosts,
 * or exactly the origin of the operator's SLACK_API_URL — judged on the parsed URL. And for whom
 * a Slack file is read (fileVisibleTo: its owner, or anyone where it is shared), which a button
 * press that finds the bot's image again (postedSlackImage) keeps too, against the fake Slack.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { english } from '../../src/core/i18n/words.ts';
import { postedImageRef } from '../../src/core/keys.ts';
import type { Downloader } from '../../src/core/media/download.ts';
import { AttachmentAccessError } from '../../src/core/platform.ts';
import {
  FILE_NOT_SHARED,
  fileVisibleTo,
  postedSlackImage,
  SLACK_FILE_HOSTS,
  slackFileHost,
} from '../../src/platforms/slack/files.ts';
import { webClient } from '../fakes/slack/test-helpers.ts';
import { FakeSlack } from '../fakes/slack.ts';

describe('slackFileHost', () => {
  it('lists files.slack.com only', () => {
    expect([...SLACK_FILE_HOSTS]).toEqual(['files.slack.com']);
  });

  it('allows https on the default port to files.slack.com, in any spelling the URL parser makes the same', () => {
    for (const url of [
      'https://files.slack.com/files-pri/T0-F0/download/a.png',
      'https://files.slack.com:443/files-pri/T0-F0/a.png',
      'https://FILES.Slack.COM/files-pri/T0-F0/a.png',
      new URL('https://files.slack.com/files-pri/T0-F0/a.png'),
    ]) {
      expect(slackFileHost(url, undefined), String(url)).toBe(true);
    }
  });

  it('refuses other schemes, other ports, look-alike hosts, user info tricks and other Slack hosts', () => {
    for (const url of [
      'http://files.slack.com/files-pri/T0-F0/a.png',
      'https://files.slack.com:8443/files-pri/T0-F0/a.png',
      'http://x.slack.com:8080/files-pri/T0-F0/a.png',
      'https://x.slack.com/files-pri/T0-F0/a.png',
      'https://slack.com/files-pri/T0-F0/a.png',
      'https://evil.example/files-pri/T0-F0/a.png',
      'https://files.slack.com.evil.example/files-pri/T0-F0/a.png',
      'https://files.slack.com./files-pri/T0-F0/a.png',
      'https://files.slack.com@evil.example/files-pri/T0-F0/a.png',
      'https://evil.example\\@files.slack.com/a.png',
      'https://evil.example#@files.slack.com/a.png',
      'ftp://files.slack.com/a.png',
      'ws://files.slack.com/a.png',
      'not a url',
      '',
    ]) {
      expect(slackFileHost(url, undefined), url).toBe(false);
    }
  });

  it('allows exactly the origin of SLACK_API_URL when it is set, and nothing more', () => {
    const apiOrigin = 'http://127.0.0.1:4567';
    expect(slackFileHost('http://127.0.0.1:4567/files-pri/T0-F0/a.png', apiOrigin)).toBe(true);
    expect(slackFileHost('https://files.slack.com/files-pri/T0-F0/a.png', apiOrigin)).toBe(true);
    for (const url of [
      'http://127.0.0.1:4568/files-pri/T0-F0/a.png',
      'https://127.0.0.1:4567/a.png',
      'http://localhost:4567/a.png',
      'http://127.0.0.1/a.png',
    ]) {
      expect(slackFileHost(url, apiOrigin), url).toBe(false);
    }
    // Unset: no exception at all (not even slack.com, the Web API's default).
    expect(slackFileHost('https://slack.com/files-pri/T0-F0/a.png', undefined)).toBe(false);
    expect(slackFileHost('http://127.0.0.1:4567/files-pri/T0-F0/a.png', undefined)).toBe(false);
  });
});

describe('fileVisibleTo', () => {
  const file = {
    user: 'U0OWNER',
    channels: ['C0PUBLIC'],
    groups: ['G0PRIVATE'],
    ims: ['D0OWNER'],
    shares: { public: { C0PUBLIC: [] }, private: { G0PRIVATE: [], G0THREADONLY: [] } },
  };

  it('lets the owner read their file anywhere, and anyone where it is shared', () => {
    expect(fileVisibleTo(file, { user: 'U0OWNER', channel: 'C0ELSEWHERE' })).toBe(true);
    for (const channel of ['C0PUBLIC', 'G0PRIVATE', 'D0OWNER', 'G0THREADONLY'])
      expect(fileVisibleTo(file, { user: 'U0OTHER', channel })).toBe(true);
  });

  it('refuses anyone else elsewhere, and a file Slack says nothing of', () => {
    expect(fileVisibleTo(file, { user: 'U0OTHER', channel: 'C0ELSEWHERE' })).toBe(false);
    expect(fileVisibleTo({ user: 'U0OWNER' }, { user: 'U0OTHER', channel: 'C0PUBLIC' })).toBe(false);
    expect(fileVisibleTo({}, { user: 'U0OTHER', channel: 'C0PUBLIC' })).toBe(false);
  });
});

describe("postedSlackImage: a press finds the bot's image only where it is shared", () => {
  let fake: FakeSlack;
  beforeAll(async () => {
    fake = await FakeSlack.start({
      channels: [
        { id: 'C0ONE', name: 'one' },
        { id: 'C0TWO', name: 'two' },
      ],
    });
  });
  afterAll(async () => {
    await fake.close();
  });

  it('finds an upload from a press in its channel; a press elsewhere is refused without reading it', async () => {
    const client = webClient(fake);
    const uploaded = await client.filesUploadV2({
      channel_id: 'C0ONE',
      initial_comment: 'a cat',
      file_uploads: [{ file: Buffer.from('png bytes'), filename: 'cat.png' }],
    });
    const id = (uploaded.files ?? []).flatMap((f) => f.files ?? [])[0]!.id!;
    const ref = postedImageRef({ platform: 'slack', file: id });
    // Nothing is downloaded here: the Downloader is never reached.
    const deps = {
      client,
      botToken: fake.botToken,
      downloader: {} as Downloader,
      apiOrigin: new URL(fake.apiUrl).origin,
    };

    const found = await postedSlackImage(ref, { user: 'U0BOB', channel: 'C0ONE' }, deps);
    expect(found).toMatchObject({ ref, file: { name: 'cat.png' } });
    const elsewhere = postedSlackImage(ref, { user: 'U0BOB', channel: 'C0TWO' }, deps);
    await expect(elsewhere).rejects.toBeInstanceOf(AttachmentAccessError);
    await expect(elsewhere).rejects.toThrow(english.say(FILE_NOT_SHARED));
    expect(fake.downloads).toEqual([]);
  });
});
