/**
 * Where the Slack bot token may go (slackFileHost): https on port 443 to Slack's file hosts,
 * or exactly the origin of the operator's SLACK_API_URL — judged on the parsed URL.
 */
import { describe, expect, it } from 'vitest';
import { SLACK_FILE_HOSTS, slackFileHost } from '../../src/platforms/slack/files.ts';

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
