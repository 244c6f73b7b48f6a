// Ports the Fetch standard blocks ("bad ports": SMTP, SIP, IRC, X11…). Node's fetch, which every probe
// sends through, and Chromium both refuse them outright, so a target listening on one cannot be tested
// at all; the profile says so up front instead of every request failing with "bad port".

const BLOCKED = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104,
  109, 110, 111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515,
  526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049,
  3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);

/** Why HTTP clients and browsers refuse this URL's port, or undefined when they do not. */
export function blockedPortReason(url: string): string | undefined {
  let port: number;
  try {
    port = Number(new URL(url).port);
  } catch {
    return undefined;
  }
  return BLOCKED.has(port)
    ? `port ${port} is one the Fetch standard blocks, so Node's fetch and Chromium refuse to connect to it ("bad port"); serve the target on another port`
    : undefined;
}
