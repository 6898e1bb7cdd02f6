/**
 * Slack's installations in the bot's store (src/platforms/slack/installations.ts), behind Bolt's
 * InstallationStore: per workspace, or per enterprise for an org-wide install; sealed (no token in
 * the file); deleted for good (the seam of an uninstall); sealed again after a key rotation.
 */

import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { storeKeys } from '../../src/core/keys.ts';
import { openStore } from '../../src/core/state/open-store.ts';
import { KeyRing } from '../../src/core/state/sealed.ts';
import type { StateStore } from '../../src/core/state/store.ts';
import {
  installedWorkspaces,
  NoInstallationError,
  type SlackInstallation,
  SlackInstallationStore,
} from '../../src/platforms/slack/installations.ts';

const log = pino({ level: 'silent' });
const key = randomBytes(32);
const opened: StateStore[] = [];

async function sqlite(): Promise<{ store: StateStore; folder: string }> {
  const folder = mkdtempSync(join(tmpdir(), 'genbot-installations-'));
  const store = await openStore(`sqlite://${join(folder, 'store.sqlite')}`);
  opened.push(store);
  return { store, folder };
}

afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
});

function teamInstall(team: string, token = `xoxb-${team}-${randomBytes(8).toString('hex')}`): SlackInstallation {
  return {
    team: { id: team, name: team },
    enterprise: undefined,
    user: { id: 'U1', token: undefined, scopes: undefined },
    bot: {
      token,
      refreshToken: `xoxe-1-${team}`,
      expiresAt: 2_000_000_000,
      scopes: ['chat:write'],
      id: 'B1',
      userId: 'U0BOT',
    },
    isEnterpriseInstall: false,
    authVersion: 'v2',
  };
}

describe('SlackInstallationStore', () => {
  it('keeps one installation per workspace and one per enterprise for an org-wide install, as Bolt queries them', async () => {
    const { store } = await sqlite();
    const installations = new SlackInstallationStore(store, new KeyRing(key), log, { cacheMs: 0 });
    await installations.storeInstallation(teamInstall('T1'));
    await installations.storeInstallation({
      ...teamInstall('T9'),
      team: undefined,
      enterprise: { id: 'E1', name: 'Grid' },
      isEnterpriseInstall: true,
    } as SlackInstallation);
    expect(await installations.ids()).toEqual(['team:T1', 'enterprise:E1']);
    const forTeam = await installations.fetchInstallation({
      teamId: 'T1',
      enterpriseId: undefined,
      isEnterpriseInstall: false,
    });
    expect(forTeam.bot?.token).toMatch(/^xoxb-T1-/);
    // A request of a workspace of the enterprise, the install org-wide: the enterprise's.
    const orgWide = await installations.fetchInstallation({
      teamId: 'T7',
      enterpriseId: 'E1',
      isEnterpriseInstall: true,
    });
    expect(orgWide.enterprise?.id).toBe('E1');
    await expect(
      installations.fetchInstallation({ teamId: 'T2', enterpriseId: undefined, isEnterpriseInstall: false }),
    ).rejects.toThrow(NoInstallationError);
    expect((await installations.ofTeam('T7', 'E1'))?.enterprise?.id).toBe('E1');
    expect(await installations.ofTeam('T7')).toBeUndefined();
  });

  it('writes no token, refresh token or team secret to the store file', async () => {
    const { store, folder } = await sqlite();
    const installations = new SlackInstallationStore(store, new KeyRing(key), log);
    await installations.storeInstallation(teamInstall('T1'));
    await opened.pop()!.close(); // flushed to the file
    const files = readdirSync(folder)
      .map((f) => readFileSync(join(folder, f)).toString('latin1'))
      .join('\n');
    expect(files).toContain('slack-installation:team:T1');
    expect(files).not.toMatch(/xox[bpe]-/);
  });

  it('deletes an installation at once: its row, its id, and this process’s cached copy', async () => {
    const { store } = await sqlite();
    const installations = new SlackInstallationStore(store, new KeyRing(key), log, { cacheMs: 60_000 });
    await installations.storeInstallation(teamInstall('T1'));
    const query = { teamId: 'T1', enterpriseId: undefined, isEnterpriseInstall: false } as const;
    await installations.fetchInstallation(query); // cached
    await installations.deleteInstallation(query);
    await expect(installations.fetchInstallation(query)).rejects.toThrow(NoInstallationError);
    expect(await store.keyv.get(storeKeys.slackInstallation('team:T1'))).toBeUndefined();
    expect(await installations.ids()).toEqual([]);
  });

  it('reads a row sealed with the previous key and seals it again with the current one', async () => {
    const { store } = await sqlite();
    const previous = randomBytes(32);
    await new SlackInstallationStore(store, new KeyRing(previous), log).storeInstallation(
      teamInstall('T1', 'xoxb-T1-a'),
    );
    const rotated = new SlackInstallationStore(store, new KeyRing(key, previous), log, { cacheMs: 0 });
    const query = { teamId: 'T1', enterpriseId: undefined, isEnterpriseInstall: false } as const;
    expect((await rotated.fetchInstallation(query)).bot?.token).toBe('xoxb-T1-a');
    await expect
      .poll(async () => {
        const row = await store.keyv.get(storeKeys.slackInstallation('team:T1'));
        try {
          return new KeyRing(key).open(row, 'team:T1').stale;
        } catch {
          return 'not yet';
        }
      })
      .toBe(false);
    const alone = new SlackInstallationStore(store, new KeyRing(key), log, { cacheMs: 0 });
    expect((await alone.fetchInstallation(query)).bot?.token).toBe('xoxb-T1-a');
  });

  it('hands each fetch its own copy: Bolt’s token refresh mutating one does not change the cache', async () => {
    const { store } = await sqlite();
    const installations = new SlackInstallationStore(store, new KeyRing(key), log, { cacheMs: 60_000 });
    await installations.storeInstallation(teamInstall('T1', 'xoxb-T1-a'));
    const query = { teamId: 'T1', enterpriseId: undefined, isEnterpriseInstall: false } as const;
    const first = await installations.fetchInstallation(query);
    first.bot!.token = 'xoxb-mutated';
    expect((await installations.fetchInstallation(query)).bot?.token).toBe('xoxb-T1-a');
  });
});

describe('installedWorkspaces (catch-up outside a request)', () => {
  it("uses the token the installer's authorize gives (a rotating token refreshed), else the stored one; none for a workspace not installed", async () => {
    const { store } = await sqlite();
    const installations = new SlackInstallationStore(store, new KeyRing(key), log, { cacheMs: 0 });
    await installations.storeInstallation(teamInstall('T1', 'xoxe.xoxb-1-expired'));
    const asked: unknown[] = [];
    const refreshed = installedWorkspaces(installations, {}, async (query) => {
      asked.push(query);
      return { botToken: 'xoxe.xoxb-1-refreshed' };
    });
    const served = await refreshed('T1');
    expect(served?.client.token).toBe('xoxe.xoxb-1-refreshed');
    expect(served?.botUserId).toBe('U0BOT');
    expect(asked).toEqual([{ teamId: 'T1', enterpriseId: undefined, isEnterpriseInstall: false }]);
    expect(await refreshed('T2')).toBeUndefined();
    expect(asked).toHaveLength(1);
    const stored = await installedWorkspaces(installations, {})('T1');
    expect(stored?.client.token).toBe('xoxe.xoxb-1-expired');
  });
});
