// Every variant base, and the variant of an id such as `spider4+open+relaxed`.

import { Myrmex } from "./myrmex.js";
import { NotationError } from "./notation.js";
import { Sparrow } from "./sparrow.js";
import { Starfish } from "./starfish.js";
import { spiderBase } from "./variant.js";
import { WizardsTower } from "./wizard.js";

const REGISTRY = {
  spider1: spiderBase("spider1", "s", 8),
  spider2: spiderBase("spider2", "sh", 4),
  spider4: spiderBase("spider4", "shdc", 2),
  spiderette: spiderBase("spiderette", "shdc", 1, {
    columns: 7,
    firstDeal: [1, 2, 3, 4, 5, 6, 7],
    stockDeals: [...Array(3).fill([0, 1, 2, 3, 4, 5, 6]), [0, 1, 2]],
  }),
  myrmex: Myrmex,
  wizard: WizardsTower,
  sparrow: Sparrow,
  starfish: Starfish,
};

/** Every variant base with the options it allows. */
export const BASES = Object.fromEntries(Object.entries(REGISTRY).map(([b, cls]) => [b, cls.optionsAllowed]));

const cache = new Map();

/** The variant of an id such as `spider4+open+relaxed`; NotationError when unknown. */
export function findVariant(id) {
  let v = cache.get(id);
  if (v) return v;
  if (typeof id !== "string" || !id) throw new NotationError("a variant id is a non-empty text");
  const [base, ...options] = id.split("+");
  const cls = REGISTRY[base];
  if (!cls) throw new NotationError(`unknown variant '${base}'`);
  for (const o of options) {
    if (!cls.optionsAllowed.includes(o)) throw new NotationError(`option '${o}' is not an option of ${base}`);
  }
  if (options.join("+") !== [...new Set(options)].sort().join("+")) {
    throw new NotationError(`malformed variant id '${id}': options go once each, in alphabetical order`);
  }
  v = new cls(new Set(options));
  cache.set(id, v);
  return v;
}
