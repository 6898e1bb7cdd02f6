/**
 * Every slash command, in the order they are registered. A new command is a new file here.
 */
import type { Command } from '../src/core/command.ts';
import chat from './chat.ts';
import complete from './complete.ts';
import forget from './forget.ts';
import { helpCommand } from './help.ts';
import imagine from './imagine.ts';
import models from './models.ts';
import settings from './settings.ts';
import usage from './usage.ts';

export const commands: readonly Command[] = [
  chat,
  imagine,
  complete,
  models,
  settings,
  forget,
  usage,
  helpCommand(() => commands),
];
