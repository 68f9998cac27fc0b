// A ZT411R stand-in on loopback for the end-to-end suite: a real TCP
// server speaking the printer's raw port as the site's own stand-in
// (site/tests/site/printer_support) does. `~HS` is answered with the three
// host-status strings (STX … ETX CR LF) carrying its flags; a format
// (`^XA … ^XZ`) is taken in whole and "printed" (kept, with its job id
// from the `^FX` comment and the EPC `^RFW,H` wrote); a `^HV` in it is
// answered with its header, the tag's read-back and its terminator.
// Faults: paper out, head open, ribbon out, paused, a wrong read-back and
// a void tag.
import { EventEmitter } from 'node:events';
import { createServer } from 'node:net';

const STX = '\x02';
const ETX = '\x03';

/** The text of `^<command>` up to the next `^FS` in `zpl`, or null. */
function field(zpl, command) {
  const start = zpl.indexOf(command);
  if (start < 0) return null;
  const from = start + command.length;
  const end = zpl.indexOf('^FS', from);
  return end < 0 ? null : zpl.slice(from, end);
}

/**
 * Starts a stand-in on a free loopback port. Returns `{address, printed,
 * statusAnswers, faults, events, until(what, check), close()}`: `faults`
 * is read at each answer (set its fields to change what it says),
 * `printed` lists `{jobId, zpl, written}`.
 */
export async function startPrinter() {
  const faults = { paper_out: false, head_open: false, ribbon_out: false, paused: false, wrong_read_back: null, void_tag: false };
  const printed = [];
  const events = new EventEmitter();
  let statusAnswers = 0;
  const sockets = new Set();

  const flag = (on) => (on ? '1' : '0');
  const hostStatus = () => [
    // aaa,b(paper out),c(pause),dddd,eee,f,g,h,iii,j,k,l
    `030,${flag(faults.paper_out)},${flag(faults.paused)},1218,000,0,0,0,000,0,0,0`,
    // mmm,n,o(head up),p(ribbon out),q,r,s,t,uuuuuuuu,v,www
    `001,0,${flag(faults.head_open)},${flag(faults.ribbon_out)},1,2,6,0,00000000,1,000`,
    '1234,0',
  ].map((s) => `${STX}${s}${ETX}\r\n`).join('');

  /** Prints one format; returns the `^HV` answer, if it asks one. */
  function print(zpl) {
    const written = field(zpl, '^RFW,H^FD');
    printed.push({ jobId: field(zpl, '^FXstockhop job '), zpl, written });
    const hv = field(zpl, '^HV');
    if (hv == null) return null;
    // ^HV#,n,header,terminator,a
    const [, , header = '', terminator = ''] = hv.split(',');
    const read = faults.void_tag ? '' : faults.wrong_read_back ?? written ?? '';
    return `${header}${read}${terminator}`;
  }

  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    // The raw port is bytes; the site sends ASCII and UTF-8 field data.
    let buf = '';
    socket.on('data', (chunk) => {
      buf += chunk.toString('latin1');
      for (;;) {
        buf = buf.replace(/^\s+/, '');
        if (buf.startsWith('~HS')) {
          buf = buf.slice(3);
          statusAnswers += 1;
          socket.write(hostStatus(), 'latin1');
          events.emit('change');
        } else if (buf.startsWith('^XA')) {
          const end = buf.indexOf('^XZ');
          if (end < 0) break;
          const format = buf.slice(0, end + 3);
          buf = buf.slice(end + 3);
          const answer = print(format);
          if (answer != null) socket.write(answer, 'latin1');
          events.emit('change');
        } else if (buf.length < 3) {
          break;
        } else {
          // Not a command the stand-in knows: the printer ignores it.
          buf = buf.slice(1);
        }
      }
    });
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address();
  return {
    address: `127.0.0.1:${port}`,
    faults,
    printed,
    events,
    get statusAnswers() {
      return statusAnswers;
    },
    /** Labels printed that carry job `jobId`. */
    printedOf(jobId) {
      return printed.filter((p) => p.jobId === jobId).length;
    },
    /** Resolves once `check()` holds, woken by each answer and label (or fails after `timeoutMs`). */
    until(what, check, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        if (check()) return resolve();
        const timer = setTimeout(() => {
          events.off('change', onChange);
          reject(new Error(`printer stand-in: timed out waiting for ${what}`));
        }, timeoutMs);
        const onChange = () => {
          if (!check()) return;
          clearTimeout(timer);
          events.off('change', onChange);
          resolve();
        };
        events.on('change', onChange);
      });
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}
