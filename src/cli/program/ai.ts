// AI content: `ai shop`, `ai coupon`, `ai bulk`, `ai configure`.
import { Option, type Command } from 'commander';
import { collect, json, type Lazy } from './options.js';

const commands = { ai: () => import('../commands/ai.js') };

export function registerAi(program: Command, lazy: Lazy): void {
  const ai = program.command('ai').description('AI content with an OpenAI-compatible provider: shop descriptions and pages, coupon rewrites, bulk runs, provider settings');
  ai.command('shop <id>')
    .description("generate an advertiser's description and page body (ID: the advertiser's number, see advertisers show)")
    .option('--dry-run', 'print the proposal without saving it')
    .addOption(json())
    .action(lazy(commands.ai, 'shop'));
  ai.command('coupon <id>')
    .description("rewrite a coupon's title and description (the original is kept: coupons revert ID)")
    .option('--dry-run', 'print the proposal without saving it')
    .addOption(json())
    .action(lazy(commands.ai, 'coupon'));
  ai.command('bulk')
    .description('generate for every shop or coupon of a filter as an ai.bulk job, run here with a progress line')
    .addOption(new Option('--kind <kind>', 'what to write').choices(['shops', 'coupons']).makeOptionMandatory())
    .option('--network <id>', 'only this network')
    .option('--status <status>', 'only this status (shops: active, inactive; coupons: active, scheduled, expired, removed)')
    .option('--advertiser <id>', "coupons: only this advertiser (the network's id)")
    .addOption(new Option('--type <type>', 'coupons: with a code, or deals').choices(['code', 'deal']))
    .option('--search <prefix>', 'shops: prefix of the name')
    .option('--overwrite', 'also items whose text the AI already wrote')
    .option('--no-progress', 'no progress line on a terminal')
    .addOption(json())
    .action(lazy(commands.ai, 'bulk'));
  ai.command('configure')
    .description('show the provider settings, or store some; the API key only from standard input or the environment')
    .option('--set <key=value>', 'a setting: base_url, model, temperature, timeout_ms, concurrency, token_budget, language, prompts.<shop|coupon>.<system|user> (repeatable)', collect)
    .option('--unset <key>', 'give a setting back to the configuration (repeatable; api_key removes the stored key)', collect)
    .option('--api-key-stdin', 'read the API key from standard input')
    .option('--api-key-env <VAR>', 'take the API key from environment variable VAR')
    .addOption(json())
    .action(lazy(commands.ai, 'configure'));
}
