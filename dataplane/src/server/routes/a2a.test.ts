import { describe, expect, it } from 'vitest';
import { sendPathAgent } from './a2a.ts';

describe('sendPathAgent', () => {
  it.each([
    ['/v1/a2a/helper/message/send', 'helper'],
    ['/v1/a2a/helper/message/send?x=1', 'helper'],
    ['/v1/a2a/helper/message/send#frag', 'helper'],
    ['/v1/a2a/helper/message/send#a?b', 'helper'],
    ['/v1/a2a/%68elper/message/send', 'helper'],
    ['/v1/a2a/a%2Fb/message/send', 'a/b'],
    ['/v1/a2a/helper/tasks/get', undefined],
    ['/v1/a2a/a/b/message/send', undefined],
    ['/v1/a2a/helper', undefined],
    ['/v1/a2a/%E0%A4%A/message/send', undefined],
    ['/v1/other/helper/message/send', undefined],
  ])('%s → %s', (url, agent) => {
    expect(sendPathAgent(url)).toBe(agent);
  });
});
