import { expect } from 'chai';
import {
  ibanValid,
  isHostIp,
  isPublicIp,
  luhnValid,
  INJECTION_DETECTORS,
  sanitize,
  skeleton,
} from '../../../src/security/index.js';

const names = (text: string): string[] => sanitize({ t: text }).findings.map((f) => f.pattern_name);

describe('sanitizer detectors', () => {
  it('has no capturing group in an injection pattern (the scan joins them into one regex)', () => {
    const groups = INJECTION_DETECTORS.filter(
      (d) => (new RegExp(`${d.pattern.source}|`).exec('')?.length ?? 0) !== 1,
    ).map((d) => d.name);
    expect(groups).to.deep.equal([]);
  });

  it('validates card numbers with Luhn and issuer prefixes', () => {
    expect(luhnValid('4111111111111111')).to.equal(true);
    expect(luhnValid('4111111111111112')).to.equal(false);
    expect(names('card 4111111111111112')).to.deep.equal([]);
    expect(names('id 1234567890123456')).to.deep.equal([]);
  });

  it('validates IBANs with their country length and mod-97 checksum', () => {
    expect(ibanValid('GB82WEST12345698765432')).to.equal(true);
    expect(ibanValid('GB82WEST12345698765433')).to.equal(false);
    expect(ibanValid('GB82WEST1234569876543')).to.equal(false);
    expect(names('GB82 WEST 1234 5698 7654 33')).to.deep.equal([]);
  });

  it('reports only public IP addresses', () => {
    expect(isPublicIp('8.8.8.8')).to.equal(true);
    for (const ip of ['10.1.2.3', '192.168.0.1', '127.0.0.1', '::1', 'fe80::1', 'fd00::1']) {
      expect(isPublicIp(ip), ip).to.equal(false);
    }
  });

  it('redacts private, shared and link-local addresses, not loopback, unspecified or multicast', () => {
    for (const ip of [
      '10.1.2.3',
      '172.16.0.1',
      '172.31.9.9',
      '192.168.0.1',
      '100.64.0.1',
      '169.254.1.1',
      'fd00::1',
      'fe80::1',
    ]) {
      expect(isHostIp(ip), ip).to.equal(true);
      expect(names(`host ${ip} up`), ip).to.deep.equal([
        ip.includes(':') ? 'ipv6_address' : 'ipv4_address',
      ]);
    }
    for (const ip of [
      '127.0.0.1',
      '0.0.0.0',
      '224.0.0.251',
      '255.255.255.255',
      '::1',
      '::',
      'ff02::1',
    ]) {
      expect(isHostIp(ip), ip).to.equal(false);
      expect(names(`host ${ip} up`), ip).to.deep.equal([]);
    }
    expect(names('172.15.0.1 and 172.32.0.1 are public')).to.deep.equal(['ipv4_address']);
  });

  it('treats a dotted quad after a version marker as a version, not an address', () => {
    expect(names('firmware v1.2.3.4')).to.deep.equal([]);
    expect(names('pkg==1.2.3.4')).to.deep.equal([]);
    expect(names('server at 1.2.3.4')).to.deep.equal(['ipv4_address']);
    expect(names('see section 10.1.2.3')).to.deep.equal([]);
    // After a login command, `user@` is followed by a host.
    expect(names('scp build.tgz deploy@10.0.0.12:/srv')).to.deep.equal(['ipv4_address']);
  });

  it('builds an injection skeleton from look-alikes, full-width letters and invisibles', () => {
    expect(skeleton('ign\u043ere \uff41ll\u200b')).to.equal('ignore all');
  });

  it('does not flag a negated override', () => {
    expect(names("Don't ignore previous instructions.")).to.deep.equal([]);
    expect(names('never disregard the above rules')).to.deep.equal([]);
  });

  it('allows zero-width joiners inside emoji and scripts that need them', () => {
    expect(names('👩‍💻 and می‌خواهم')).to.deep.equal([]);
    expect(names('ad\u200dmin')).to.deep.equal(['zero_width_joiner_in_word']);
  });

  it('finds secrets split by invisible characters and redacts them', () => {
    const result = sanitize({ t: 'AKIA\u200bIOSFODNN7EXAMPLE' });
    expect(result.findings.map((f) => f.pattern_name)).to.include('aws_access_key_id');
    expect(result.cleaned_value).to.deep.equal({ t: '[REDACTED]' });
  });

  it('stays linear on adversarial input (no catastrophic backtracking)', () => {
    const inputs = [
      'a'.repeat(200_000),
      `${'ignore '.repeat(20_000)}x`,
      `${'1 '.repeat(50_000)}`,
      `${'a@'.repeat(50_000)}`,
      `${'password='.repeat(10_000)}`,
      `${'-----BEGIN PRIVATE KEY-----'.repeat(2_000)}`,
      `${'::'.repeat(50_000)}`,
      `${'eyJ'.repeat(30_000)}.`,
      `a${'\u0301\u0316'.repeat(100_000)}`,
      `\uFF21${'\uFF41\u200B'.repeat(100_000)}`,
    ];
    for (const input of inputs) {
      const started = performance.now();
      sanitize({ t: input });
      expect(performance.now() - started, input.slice(0, 20)).to.be.below(1500);
    }
  });
});
