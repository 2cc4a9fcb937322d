// The users and searches of `npm run bench:lookup`: the same on every run and both databases, with
// the uneven selectivity of real names (some prefixes match thousands of users, some a few, some none).
import { prng } from './ledger-db.js';

const SEED = 0x5eed;

// mulberry32 (bench/ledger-db.js): small, seeded, good enough for test data.
export { prng };

// Ranked by frequency; picked with Zipf-like weights so some prefixes match thousands of rows.
const FIRST_NAMES = [
  'Maria',
  'James',
  'Anna',
  'John',
  'Laura',
  'Michael',
  'Sarah',
  'David',
  'Emma',
  'Thomas',
  'Julia',
  'Daniel',
  'Sophie',
  'Lucas',
  'Olivia',
  'Peter',
  'Chloé',
  'Marco',
  'Elena',
  'Kevin',
  'Nina',
  'Paul',
  'Lea',
  'Robert',
  'Hannah',
  'Ahmed',
  'Ines',
  'Jonas',
  'Claire',
  'Stefan',
  'Fatima',
  'Oscar',
  'Yuki',
  'Björn',
  'Priya',
  'Igor',
  'Wanda',
  'Ulrich',
  'Xavier',
  'Quentin',
];
const LAST_NAMES = [
  'Smith',
  'Garcia',
  'Müller',
  'Martin',
  'Johnson',
  'Rossi',
  'Brown',
  'Dubois',
  'Schmidt',
  'Lopez',
  'Wilson',
  'Bernard',
  'Fischer',
  'Taylor',
  'Moreau',
  'Weber',
  'Anderson',
  'Romano',
  'Meyer',
  'Thomas',
  'Novak',
  'Jackson',
  'Petit',
  'Wagner',
  'Kowalski',
  'White',
  'Laurent',
  'Becker',
  'Harris',
  'Conti',
  'Nguyen',
  'Schulz',
  'Clark',
  'Lefebvre',
  'Hoffmann',
  'Young',
  'Kim',
  'Zimmermann',
  'Olsen',
  'Evans',
];
const ADJECTIVES = ['lucky', 'smart', 'happy', 'thrifty', 'golden', 'super', 'deal', 'coupon'];
const NOUNS = ['saver', 'shopper', 'hunter', 'queen', 'king', 'fox', 'cash', 'bargain'];
const DOMAINS = [
  ['gmail.com', 40],
  ['yahoo.com', 12],
  ['outlook.com', 10],
  ['hotmail.com', 10],
  ['icloud.com', 7],
  ['gmx.de', 6],
  ['web.de', 5],
  ['orange.fr', 4],
  ['proton.me', 3],
  ['free.fr', 3],
];

function zipfPicker(items, s, rand) {
  const weights = items.map((_, i) => 1 / (i + 1) ** s);
  return weightedPicker(
    items.map((item, i) => [item, weights[i]]),
    rand,
  );
}

function weightedPicker(pairs, rand) {
  const total = pairs.reduce((sum, [, w]) => sum + w, 0);
  return () => {
    let r = rand() * total;
    for (const [item, w] of pairs) if ((r -= w) < 0) return item;
    return pairs[pairs.length - 1][0];
  };
}

/** ASCII, lower case: logins and email local parts. */
function slug(name) {
  return name
    .normalize('NFD')
    .replace(/[^A-Za-z]/g, '')
    .toLowerCase();
}

/** `count` users: logins like `maria.garcia123`, emails at several domains, "Maria Garcia". */
export function generateUsers(count) {
  const rand = prng(SEED);
  const int = (n) => Math.floor(rand() * n);
  const first = zipfPicker(FIRST_NAMES, 0.8, rand);
  const last = zipfPicker(LAST_NAMES, 0.8, rand);
  const domain = weightedPicker(DOMAINS, rand);
  const logins = new Set();
  const emails = new Set();
  const unique = (set, base) => {
    let value = base;
    while (set.has(value)) value = `${base}${int(10_000)}`;
    set.add(value);
    return value;
  };
  const number = () => (rand() < 0.3 ? String(1950 + int(60)) : String(1 + int(999)));
  const now = Date.now();
  const users = [];
  for (let i = 0; i < count; i++) {
    const f = first();
    const l = last();
    const form = rand();
    let login;
    if (form < 0.7) login = `${slug(f)}.${slug(l)}${number()}`;
    else if (form < 0.85) login = `${slug(f)[0]}${slug(l)}${number()}`;
    else if (form < 0.95) login = `${slug(f)}_${slug(l)}${number()}`;
    else login = `${ADJECTIVES[int(ADJECTIVES.length)]}_${NOUNS[int(NOUNS.length)]}${number()}`;
    login = unique(logins, login);
    const local = rand() < 0.6 ? login : rand() < 0.5 ? `${slug(f)}.${slug(l)}` : `${slug(f)[0]}.${slug(l)}`;
    const at = domain();
    let email = `${local}@${at}`;
    while (emails.has(email)) email = `${local}${int(10_000)}@${at}`;
    emails.add(email);
    // Some accounts never set a display name, which then defaults to the login.
    const displayName = rand() < 0.03 ? login : `${f} ${l}`;
    users.push({
      login,
      email,
      display_name: displayName,
      role: i % 5_000 === 0 ? 'administrator' : 'member',
      status: rand() < 0.04 ? 'disabled' : 'active',
      created_at: new Date(now - int(5 * 365 * 86_400_000)),
    });
  }
  return users;
}

/** ~200 searches: 1-, 2-, 3-letter and longer prefixes of logins, emails, display names, and misses. */
export function generateSearches(users) {
  const rand = prng(SEED + 1);
  const int = (n) => Math.floor(rand() * n);
  const pick = () => users[int(users.length)];
  const searches = [];
  const add = (category, search) => {
    if (!searches.some((s) => s.search === search)) searches.push({ category, search });
  };
  for (const c of 'abcdefghijklmnopqrstuvwxyz') add('1 letter', c);
  const pairs = ['ma', 'jo', 'an', 'la', 'sa', 'da', 'em', 'th', 'lu', 'ke', 'ga', 'sm', 'mu', 'ro', 'lo', 'qu', 'xa', 'yu', 'zi', 'wa'];
  for (const p of pairs) add('2 letters', p);
  while (searches.filter((s) => s.category === '2 letters').length < 30) add('2 letters', String.fromCharCode(97 + int(26), 97 + int(26)));
  const triples = ['mar', 'jam', 'ann', 'mic', 'gar', 'smi', 'mül', 'luc', 'dav', 'ahm', 'igo', 'wan', 'xav', 'que', 'kow', 'zim', 'cou'];
  for (const p of triples) add('3 letters', p);
  while (searches.filter((s) => s.category === '3 letters').length < 30) add('3 letters', String.fromCharCode(97 + int(26), 97 + int(26), 97 + int(26)));
  while (searches.filter((s) => s.category === 'login').length < 30) {
    const { login } = pick();
    add('login', login.slice(0, Math.min(login.length, 5 + int(login.length - 3))));
  }
  while (searches.filter((s) => s.category === 'email').length < 25) {
    const { email } = pick();
    const at = email.indexOf('@');
    const cut = [at, at + 1, at + 3, email.length][int(4)];
    add('email', email.slice(0, cut));
  }
  while (searches.filter((s) => s.category === 'display name').length < 30) {
    const { display_name: name } = pick();
    const space = name.indexOf(' ');
    const cut = space < 0 ? name.length : [space, space + 2, space + 4, name.length][int(4)];
    add('display name', name.slice(0, cut));
  }
  const misses = [
    'zz',
    'qx',
    'xq',
    'zzq',
    'qqq',
    'xyz',
    'jjj',
    'nobody',
    'nobody.here',
    'maria.garcia99999x',
    'john.smith@nowhere.invalid',
    '%',
    '_',
    '!',
    "o'brien",
    "' OR 1=1 --",
    '12345',
    '@',
    '@gmail.com',
    'Maria Zz',
    'Zoltan',
    'zoë',
    '-',
    '.',
    'ma%ia',
    'a_b',
    'admin!',
    'vwx',
    'kkk',
    'hhh',
  ];
  for (const m of misses) add('no match', m);
  return searches;
}
