// A short, human name for a paired browser (R-REM-3), guessed from its
// User-Agent header so `assent web devices` says "Chrome on Android" rather
// than a hash. A hint for people, never used to decide anything.

const BROWSERS: readonly [RegExp, string][] = [
  [/\bEdg(?:e|A|iOS)?\//, 'Edge'],
  [/\bFirefox\/|\bFxiOS\//, 'Firefox'],
  [/\bSamsungBrowser\//, 'Samsung Internet'],
  [/\bOPR\//, 'Opera'],
  [/\bChromium\//, 'Chromium'],
  [/\bChrome\/|\bCriOS\//, 'Chrome'],
  [/\bVersion\/[\d.]+.*\bSafari\//, 'Safari'],
];

const SYSTEMS: readonly [RegExp, string][] = [
  [/\bAndroid\b/, 'Android'],
  [/\biPhone\b/, 'iPhone'],
  [/\biPad\b/, 'iPad'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bMac OS X\b|\bMacintosh\b/, 'macOS'],
  [/\bWindows\b/, 'Windows'],
  [/\bLinux\b/, 'Linux'],
];

/** "Chrome on Android", "Firefox", "browser on Linux", or "browser" when nothing is known. */
export function deviceNameFrom(userAgent: string | undefined): string {
  const text = userAgent ?? '';
  const browser = BROWSERS.find(([pattern]) => pattern.test(text))?.[1] ?? 'browser';
  const system = SYSTEMS.find(([pattern]) => pattern.test(text))?.[1];
  return system === undefined ? browser : `${browser} on ${system}`;
}
