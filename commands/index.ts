/**
 * Every slash command, in the order they are registered, and every message action (a message's
 * own menu: Discord message commands, Slack message shortcuts). A new command is a new file here.
 */
import type { Command } from '../src/core/command.ts';
import type { MessageAction } from '../src/core/message-action.ts';
import askAboutMessage from './ask-about-message.ts';
import chat from './chat.ts';
import complete from './complete.ts';
import exportCommand from './export.ts';
import forget from './forget.ts';
import { helpCommand } from './help.ts';
import imagine from './imagine.ts';
import models from './models.ts';
import settings from './settings.ts';
import summarizeMessage from './summarize-message.ts';
import usage from './usage.ts';

export const commands: readonly Command[] = [
  chat,
  imagine,
  complete,
  models,
  settings,
  forget,
  exportCommand,
  usage,
  helpCommand(
    () => commands,
    () => messageActions,
  ),
];

/** Every message action, in the order the menus list them (Discord registers them with the commands). */
export const messageActions: readonly MessageAction[] = [askAboutMessage, summarizeMessage];
