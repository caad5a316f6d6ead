import { describe, expect, it } from 'vitest';
import { detect } from './pii.ts';

const found = (text: string, threshold = 0.5): Array<[string, string]> =>
  detect(text)
    .filter((f) => f.score >= threshold)
    .map((f) => [f.category, text.slice(f.start, f.end)]);

describe('pii detector', () => {
  it.each([
    ['Contact maria.gonzalez@gmail.com today', 'EMAIL', 'maria.gonzalez@gmail.com'],
    ['Call me on +1 415 555 2671 after 6pm.', 'PHONE', '+1 415 555 2671'],
    ['Customer phone: (212) 555-0147', 'PHONE', '(212) 555-0147'],
    ['Mein Handy: +49 151 23456789', 'PHONE', '+49 151 23456789'],
    ['Tel. 030 12345678 (Büro)', 'PHONE', '030 12345678'],
    ['Card 4636 9661 8787 3712, exp 09/27', 'CREDIT_CARD', '4636 9661 8787 3712'],
    ['amex: 3424 284586 60545', 'CREDIT_CARD', '3424 284586 60545'],
    ['IBAN: DE84 2643 6332 3159 7588 34.', 'IBAN', 'DE84 2643 6332 3159 7588 34'],
    ['SSN: 581-22-6832', 'US_SSN', '581-22-6832'],
    ['Failed login from 185.220.101.47 at 02:14', 'IP_ADDRESS', '185.220.101.47'],
    [
      'client 2a02:8108:1940:2e00:d5b1:7e2c:9f3a:11c4 connected',
      'IP_ADDRESS',
      '2a02:8108:1940:2e00:d5b1:7e2c:9f3a:11c4',
    ],
    ['NINO AB123456D', 'UK_NINO', 'AB123456D'],
    ['Steuer-ID: 62174835665', 'DE_TAX_ID', '62174835665'],
    ['DNI 34583440L', 'ES_DNI', '34583440L'],
    ['BSN: 235719663', 'NL_BSN', '235719663'],
    ['CPF 238.387.693-33', 'BR_CPF', '238.387.693-33'],
  ])('finds %s', (text, category, span) => {
    expect(found(text)).toEqual([[category, span]]);
  });

  it.each([
    'Card 4111 1111 1111 1112 fails the Luhn check.',
    'Order #4636966187873713 has shipped.',
    'Release v2.14.3 fixes the leak; upgrade from 2.13.0.',
    'The meeting is on 2024-03-15 at 10:30, invoice date 15.03.2024.',
    'Request id 3f2b8c1e-9a7d-4e2f-b6a1-0c5d8e7f9a12 failed.',
    'Fixed in commit a453541af3a1bade1ddea69872ea0c7585d7a1cd.',
    'Connect to 192.168.1.10 or 127.0.0.1:8080, mask 255.255.255.0',
    'DE89 3704 0044 0532 0130 01 has a wrong check digit.',
    'SSN 000-12-3456 is invalid.',
    'Clone git@github.com:acme/gateway.git and npm i lodash@4.17.21',
    'The std::vector<int> type; MAC 3c:22:fb:9a:11:0e; time 10:30:00',
    'Unix timestamp 1709812345 and 11-digit order 62174835665',
    'git clone https://user@github.com/acme/api.git',
  ])('ignores %s', (text) => {
    expect(found(text)).toEqual([]);
  });

  it('reports private and loopback addresses below the default threshold', () => {
    const f = detect('ssh to 10.0.0.5');
    expect(f).toHaveLength(1);
    expect(f[0]?.score).toBeLessThan(0.5);
  });

  it('needs a naming word for weak-checksum ids', () => {
    expect(found('order 235719663 shipped')).toEqual([]);
    expect(found('BSN 235719663')).toEqual([['NL_BSN', '235719663']]);
  });
});
