import { describe, expect, it } from 'vitest';
import { canonicalSegments, isAdministrativePath } from './admin-paths.ts';

describe('isAdministrativePath', () => {
  it.each([
    '/ui',
    '/UI',
    '/Ui/',
    '//ui',
    '///ui//',
    '/ui/',
    '/ui/settings',
    '/ui?x=1',
    '/ui#frag',
    '/%75i',
    '/%55%49',
    '/%2Fui',
    '/%252Fui',
    '/%25252575i',
    '/x/../ui',
    '/v1/../../ui',
    '/./ui',
    '/%2e%2e/ui',
    '/v1/%2e%2e/ui',
    '/ui;jsessionid=1',
    '/UI;a=b/c',
    '/\\ui',
    '/sso',
    '/SSO/callback',
    '/login',
    '/Login;x',
    '/%6c%6f%67%69%6e',
    '/ui%20',
    'http://evil.example/ui',
    'HTTPS://x:1/%55I/',
  ])('%s is administrative', (url) => {
    expect(isAdministrativePath(url)).toBe(true);
  });

  it.each([
    '/',
    '/v1/chat/completions',
    '/v1/ui',
    '/uix',
    '/ui-kit',
    '/api/analytics/dashboard',
    '/v1/models?ui=1',
    '/ui../x',
    '/%zz',
    '/logins',
    'http://ui/v1/models',
    '/v1/models/',
    '/ui_',
    '/sso-x/ui',
    '/?ui',
  ])('%s is not', (url) => {
    expect(isAdministrativePath(url)).toBe(false);
  });

  it('a path encoded deeper than any honest client would is refused rather than guessed', () => {
    let deep = '/ui';
    for (let i = 0; i < 8; i++) deep = deep.replace(/%/g, '%25').replace('u', '%75');
    expect(canonicalSegments(deep)).toBeUndefined();
    expect(isAdministrativePath(deep)).toBe(true);
  });

  it('canonical segments resolve dots, drop params and empty segments, and lower-case', () => {
    expect(canonicalSegments('/V1//Chat/./x/../Completions;v=2/')).toEqual(['v1', 'chat', 'completions']);
  });
});
