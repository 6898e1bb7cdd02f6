/**
 * The floor of `bench:streams`: the least a discord.js bot can do to answer /chat with a
 * streamed answer, on the same machine and against the same fakes as the bot. A process of its
 * own (`node --import tsx bench/floor-bot.ts`, configured by the bot's own environment
 * variables: DISCORD_TOKEN, DISCORD_API_URL, SERVICE_BASE_URL, SERVICE_API_KEY), like the bot.
 *
 * On each /chat it defers at once (deferReply), asks the service for a streamed chat completion
 * of the prompt alone (undici, as many connections as SERVICE_MAX_CONCURRENCY says, like the bot), and edits the reply with the text so far at
 * most once a second (one PATCH of `@original`, discord.js's REST client, no Message built from
 * it), then once more with the whole text. discord.js's REST keeps 256 connections with its
 * global limit lifted (interaction webhooks are not bound to Discord's global rate limit). No
 * history, settings, quotas, permissions or write scheduler: what any bot must spend, and no more.
 *
 * Prints `READY` once its gateway session is ready, and `DONE <interaction id> ok|<error>` when
 * an answer is over (its last edit done or failed).
 */
import {
  type ChatInputCommandInteraction,
  Client,
  Events,
  GatewayIntentBits,
  type RESTOptions,
  Routes,
} from 'discord.js';
import { Agent, request } from 'undici';

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};
const SERVICE = env('SERVICE_BASE_URL').replace(/\/+$/, '');
const API_KEY = env('SERVICE_API_KEY');
const MODEL = process.env.DEFAULT_CHAT_MODEL ?? 'fake-chat';
const EDIT_INTERVAL_MS = 1000;

// As many connections to the service as the bot may hold streams open (SERVICE_MAX_CONCURRENCY, the bot's default 256).
const serviceAgent = new Agent({
  connections: Number(process.env.SERVICE_MAX_CONCURRENCY ?? 256),
  keepAliveTimeout: 30_000,
});
// BENCH_FLOOR_INTENTS=messages: also the message intents the bot asks for (mentions, DMs), so that
// the floor gets the same gateway traffic (a MESSAGE_CREATE per answer, a MESSAGE_UPDATE per edit),
// handled as discord.js handles it by default.
const messageIntents =
  process.env.FLOOR_INTENTS === 'messages' ? [GatewayIntentBits.GuildMessages, GatewayIntentBits.DirectMessages] : [];
const client = new Client({
  intents: [GatewayIntentBits.Guilds, ...messageIntents],
  rest: {
    api: env('DISCORD_API_URL'),
    agent: new Agent({ connections: 256, keepAliveTimeout: 30_000 }) as unknown as RESTOptions['agent'],
    globalRequestsPerSecond: 1_000_000,
  },
});

/** Yields the text of each content delta of an OpenAI-style SSE stream. */
async function* deltas(body: AsyncIterable<Buffer>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const bytes of body) {
    buffer += decoder.decode(bytes, { stream: true });
    for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (!event.startsWith('data: ') || event === 'data: [DONE]') continue;
      const chunk = JSON.parse(event.slice(6)) as { choices?: Array<{ delta?: { content?: string } }> };
      const text = chunk.choices?.[0]?.delta?.content;
      if (text) yield text;
    }
  }
}

/** Answers one /chat: defer, stream, edit at most once a second, then the whole text. */
async function answer(interaction: ChatInputCommandInteraction): Promise<void> {
  const deferral = interaction.deferReply();
  const route = Routes.webhookMessage(interaction.applicationId, interaction.token, '@original');
  let text = '';
  let shown = '';
  let lastEdit = 0;
  let editing: Promise<unknown> | undefined;
  let failed: unknown;
  const edit = () => {
    shown = text;
    lastEdit = Date.now();
    editing = deferral
      .then(() => client.rest.patch(route, { body: { content: shown, allowed_mentions: { parse: [] } }, auth: false }))
      .catch((error: unknown) => {
        failed ??= error;
      })
      .finally(() => {
        editing = undefined;
      });
  };
  const response = await request(`${SERVICE}/v1/chat/completions`, {
    method: 'POST',
    dispatcher: serviceAgent,
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      model: MODEL,
      messages: [{ role: 'user', content: interaction.options.getString('prompt', true) }],
      stream: true,
    }),
  });
  if (response.statusCode !== 200) throw new Error(`service answered ${response.statusCode}`);
  for await (const piece of deltas(response.body)) {
    text += piece;
    if (!editing && Date.now() - lastEdit >= EDIT_INTERVAL_MS) edit();
  }
  await deferral;
  while (editing !== undefined) await editing;
  const wait = lastEdit + EDIT_INTERVAL_MS - Date.now();
  if (text !== shown) {
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    edit();
    await editing;
  }
  if (failed) throw failed;
}

client.on(Events.InteractionCreate, (interaction) => {
  if (!interaction.isChatInputCommand() || interaction.commandName !== 'chat') return;
  answer(interaction).then(
    () => process.stdout.write(`DONE ${interaction.id} ok\n`),
    (error: unknown) =>
      process.stdout.write(`DONE ${interaction.id} ${error instanceof Error ? error.message : String(error)}\n`),
  );
});
client.once(Events.ClientReady, () => process.stdout.write('READY\n'));
process.on('SIGTERM', () => {
  void client.destroy().finally(() => process.exit(0));
});
await client.login(env('DISCORD_TOKEN'));
