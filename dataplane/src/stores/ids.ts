import { randomBytes } from 'node:crypto';

/** 96 random bits, URL-safe, no `:` (Redis members use `:` as a separator). */
export const newId = (): string => randomBytes(12).toString('base64url');
