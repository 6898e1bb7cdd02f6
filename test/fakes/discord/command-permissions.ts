/**
 * Who sees an application command, as Discord decides it (Application Commands → Permissions):
 * a guild member sees a command only when their permissions hold every bit of its
 * `default_member_permissions` (Administrator holds them all; `"0"`: admins only; null: everyone),
 * unless an override a server admin set under Server Settings → Integrations names them (type 2,
 * a user) or one of their roles (type 1); a user's override wins over their roles'. Discord's
 * client neither lists nor sends a command the member does not see: no interaction of it exists.
 */
import { P } from './constants.ts';
import type { FakeCommand } from './types.ts';

/** One override of a command's permissions, shaped as Discord's `application_command_permissions`. */
export interface CommandPermission {
  /** A user's or a role's id. */
  id: string;
  /** 1 a role, 2 a user. */
  type: 1 | 2;
  /** Whether they may see and use the command. */
  permission: boolean;
}

/** The member an interaction would come from: their id, roles and permission bits (a decimal string). */
export interface CommandInvoker {
  userId: string;
  username: string;
  roles: readonly string[];
  permissions: string;
}

/**
 * @throws Error when `invoker` does not see `command` (see the file's comment): Discord's client
 *   would not send it. A command the fake has not registered is not checked.
 */
export function checkCommandShown(
  command: FakeCommand | undefined,
  invoker: CommandInvoker,
  overrides: readonly CommandPermission[] = [],
): void {
  if (!command) return;
  const own = overrides.find((o) => o.type === 2 && o.id === invoker.userId);
  if (own) {
    if (own.permission) return;
    throw new Error(`FakeDiscord: /${command.name} is not shown to ${invoker.username} (a server admin denied it)`);
  }
  const byRole = overrides.filter((o) => o.type === 1 && invoker.roles.includes(o.id));
  if (byRole.some((o) => o.permission)) return;
  if (byRole.length > 0)
    throw new Error(`FakeDiscord: /${command.name} is not shown to ${invoker.username} (denied to their roles)`);
  const required = command.default_member_permissions;
  if (typeof required !== 'string') return;
  const held = BigInt(invoker.permissions);
  if ((held & P.Administrator) !== 0n || (required !== '0' && (held & BigInt(required)) === BigInt(required))) return;
  throw new Error(
    `FakeDiscord: /${command.name} is not shown to ${invoker.username}: its default_member_permissions (${required}) are not all theirs`,
  );
}
