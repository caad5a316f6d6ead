export * from './schemas.ts';
export { compileValidators, formatAjvErrors, sharedValidators, type Validators } from './validate.ts';
export { KIND_INFO, renderCrd, renderCrds, type CustomResourceDefinition } from './render.ts';
