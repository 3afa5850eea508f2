// A QR code drawn with half-block characters (R-REM-2), two modules per
// character row, with a 4-module quiet zone. The qrcode library encodes; this
// only draws. With colour the code is black on white whatever the terminal's
// background; without colour (NO_COLOR, or stdout not a terminal) the blocks are
// the light modules, which reads correctly on the usual dark background.

const ESC = '\u001b[';
/** Black foreground on white background, and back to the terminal's own colours. */
const DARK_ON_LIGHT = `${ESC}30;47m`;
const RESET = `${ESC}0m`;
export const QR_QUIET_ZONE = 4;

/** Half-block for a cell whose top and bottom halves are "drawn" or not. */
function cell(top: boolean, bottom: boolean): string {
  if (top && bottom) return '\u2588';
  if (top) return '\u2580';
  if (bottom) return '\u2584';
  return ' ';
}

/** The QR code of `text` as terminal lines (ending in a newline). */
export async function renderQrCode(text: string, options: { color: boolean }): Promise<string> {
  const { create } = await import('qrcode');
  const { modules } = create(text, { errorCorrectionLevel: 'M' });
  const size = modules.size;
  const total = size + 2 * QR_QUIET_ZONE;
  const dark = (x: number, y: number): boolean => {
    const mx = x - QR_QUIET_ZONE;
    const my = y - QR_QUIET_ZONE;
    return mx >= 0 && my >= 0 && mx < size && my < size && modules.get(my, mx) === 1;
  };
  const lines: string[] = [];
  for (let y = 0; y < total; y += 2) {
    let line = '';
    for (let x = 0; x < total; x += 1) {
      // Colour: the blocks are dark modules on a white background. Plain: the blocks are the light ones.
      const top = dark(x, y);
      const bottom = y + 1 < total && dark(x, y + 1);
      line += options.color ? cell(top, bottom) : cell(!top, !bottom);
    }
    lines.push(options.color ? `${DARK_ON_LIGHT}${line}${RESET}` : line);
  }
  return `${lines.join('\n')}\n`;
}
