// The types of corpus.mjs, for the unit tests.
export function pathological(size: number): { name: string; text: string }[];
