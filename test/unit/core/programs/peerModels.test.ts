// R-SH-6 tables of the read-only programs coding agents approve on their own:
// the forms each model accepts, with what they read, and the forms it refuses,
// with the option or word that decided.
import { describe, expect, it } from 'vitest';
import { jqFilterRefusal } from '../../../../src/core/policy/programs/jq.js';
import { expectAccepted, expectRefused, judge, substitution, variable, words } from './programTable.js';

describe('R-SH-6 coreutils text filters: every file operand is a read', () => {
  it.each([
    ['cut -d: -f1 README.md', ['README.md']],
    ['cut -c1-3 --output-delimiter=, a b', ['a', 'b']],
    ['cut -b 1 -n --complement -s -z a', ['a']],
    ['nl -ba -s: -w3 a', ['a']],
    ['nl -b pfoo a', ['a']],
    ['paste -d, -s a b', ['a', 'b']],
    ['rev a', ['a']],
    ['tac -s x -r a', ['a']],
    ['base64 a', ['a']],
    ['base64 -d -i -w 0 a', ['a']],
    ['fold -w 40 -s a', ['a']],
    ['fold -12 a', ['a']],
    ['expand -t 4 a', ['a']],
    ['expand -4 a', ['a']],
    ['unexpand -a --first-only a', ['a']],
    ['comm -12 a b', ['a', 'b']],
    ['comm --total --output-delimiter=: a b', ['a', 'b']],
    ['join -t , -1 2 -2 1 -o 1.1,2.2 a b', ['a', 'b']],
    ['join --header -a1 -e x a b', ['a', 'b']],
    ['od -c a', ['a']],
    ['od -An -tx1 -N 16 -j 4 -w8 --endian=little a', ['a']],
    ['od --strings a', ['a']],
    ['od -S 4 a', ['a']],
  ])('%s', (command, reads) => void expectAccepted(command, { reads, writes: [], trees: [] }));

  it('tr reads stdin only; its operands are sets, and its options end at the first one', () => {
    expectAccepted('tr a-z A-Z', { reads: [] });
    expectAccepted('tr -d [:space:]', { reads: [] });
    expectAccepted('tr -cs A-Za-z \\n', { reads: [] });
    // `tr x -d` maps x to "-": -d is a set there.
    expectAccepted('tr x -d', { reads: [] });
    expectRefused('tr a b c', undefined, /more than tr takes/);
  });

  it('numfmt operands are numbers', () => {
    expectAccepted('numfmt --to=si 1000 2000', { reads: [] });
    expectAccepted('numfmt --from=iec --header --field 2-4 --format %.1f', { reads: [] });
  });

  it('refuses extra operands and options the programs do not document', () => {
    expectRefused('base64 a b', undefined, /more than base64 takes/);
    expectRefused('comm a b c', undefined, /more than comm takes/);
    expectRefused('join a b c', undefined, /more than join takes/);
    expectRefused('cut --foo a', undefined, /not one this model knows/);
    expectRefused('od -H a', undefined, /not one this model knows/);
    expectRefused('rev -0 a', undefined, /not one this model knows/);
  });

  it('file operands must be statically known', () => {
    expectRefused(words('cut -f1 --', variable('f')), undefined, /not statically known/);
    expectAccepted(words('tr -- a-z', variable('x')));
    // Its options ended at a-z: `--` after it is a second set, and the word after that one more than tr takes.
    expectRefused(words('tr a-z --', variable('x')), undefined, /more than tr takes/);
  });
});

describe('R-SH-6 checksums: -c reads files named inside the list', () => {
  it.each(['md5sum', 'sha1sum', 'sha224sum', 'sha256sum', 'sha384sum', 'sha512sum', 'b2sum', 'cksum'])('%s reads its operands; -c is refused', (program) => {
    expectAccepted(`${program} a b`, { reads: ['a', 'b'] });
    expectAccepted(`${program} --tag -z a`, { reads: ['a'] });
    expectRefused(`${program} -c sums`, '--check', /files named inside its operands/);
    expectRefused(`${program} --check sums`, '--check');
    expectRefused(`${program} --ch sums`, '--check');
    expectRefused(`${program} --quiet -c sums`, '--check');
  });

  it('b2sum and cksum take a length; cksum an algorithm', () => {
    expectAccepted('b2sum -l 256 a', { reads: ['a'] });
    expectAccepted('cksum -a sha256 --untagged a', { reads: ['a'] });
    expectRefused('sha256sum -l 256 a', undefined, /not one this model knows/);
  });
});

describe('R-SH-6 seq and expr only compute', () => {
  it.each(['seq 10', 'seq 1 10', 'seq 1 2 10', 'seq -w -s , 1 10', 'seq -f %03g 5', 'seq -5 5', 'seq -s -1 3', 'seq -.5 1', 'seq -w -1 1'])('%s', (command) => {
    expectAccepted(command, { reads: [], writes: [] });
  });

  it('seq refuses a fourth operand and unknown options', () => {
    expectRefused('seq 1 2 3 4', undefined, /more than seq takes/);
    expectRefused('seq -x 1', undefined, /not one this model knows/);
  });

  it.each(['expr 1 + 2', 'expr length abc', 'expr abc : a.*', 'expr match abc ab', 'expr substr abc 1 2', 'expr -1 + 2', 'expr --help'])('%s', (command) => {
    expectAccepted(command, { model: 'expr', reads: [] });
  });

  it('expr takes a quoted plain variable, but not a substitution or an unquoted one', () => {
    expectAccepted(words('expr', variable('n'), '+ 1'));
    expectRefused(words('expr', variable('n', false), '+ 1'), undefined, /split/);
    expectRefused(words('expr', substitution(), '+ 1'), undefined, /not statically known/);
  });
});

describe('R-SH-6 system facts', () => {
  it('id, nproc, uptime, df', () => {
    expectAccepted('id', { reads: [] });
    expectAccepted('id -u', { reads: [] });
    expectAccepted('id -nG root', { reads: [] });
    expectAccepted('nproc --all', { reads: [] });
    expectAccepted('uptime -p', { reads: [] });
    expectAccepted('df -h .', { reads: ['.'] });
    expectAccepted('df --output=source,avail -x tmpfs', { reads: [] });
    expectRefused('uptime -c', undefined, /not one this model knows/);
  });

  it('hostname prints; every form that sets it is refused', () => {
    expectAccepted('hostname', { reads: [] });
    expectAccepted('hostname -f', { reads: [] });
    expectAccepted('hostname --short', { reads: [] });
    expectAccepted('hostname -I', { reads: [] });
    expectRefused('hostname evil', undefined, /"evil" sets the host name/);
    expectRefused('hostname -F /etc/hostname', '--file', /sets the host name from a file/);
    expectRefused('hostname --fi=name', '--file');
    expectRefused('hostname -b', '--boot', /sets the host name/);
    expectRefused('hostname --a', undefined, /ambiguous/);
  });

  it('pgrep lists PIDs and names; -a prints command lines', () => {
    expectAccepted('pgrep node', { reads: [] });
    expectAccepted('pgrep -f vitest', { reads: [] });
    expectAccepted('pgrep -l -u root -x sshd', { reads: [] });
    expectAccepted('pgrep -c -F run.pid', { reads: ['run.pid'] });
    expectRefused('pgrep -a node', '--list-full', /command line/);
    expectRefused('pgrep -fa node', '--list-full');
    expectRefused('pgrep --list-f node', '--list-full');
    expectRefused('pgrep --signal=9 node', '--signal', /pkill/);
    expectRefused('pgrep a b', undefined, /more than pgrep takes/);
  });

  it('printenv prints only named variables that hold no secret', () => {
    expectAccepted('printenv HOME', { reads: [] });
    expectAccepted('printenv -0 PATH USER SHELL PWD LANG TERM LC_ALL TZ', { reads: [] });
    expectAccepted('printenv --help');
    expectRefused('printenv', undefined, /whole environment/);
    expectRefused('printenv -0', undefined, /whole environment/);
    expectRefused('printenv ANTHROPIC_API_KEY', undefined, /not a variable known to hold no secret/);
    expectRefused('printenv HOME GITHUB_TOKEN', undefined, /GITHUB_TOKEN/);
    expectRefused(words('printenv --', variable('n')), undefined, /not statically known/);
  });
});

describe('R-SH-6 egrep and fgrep are grep', () => {
  it('same options and operands', () => {
    expectAccepted('egrep x README.md', { model: 'egrep', reads: ['README.md'] });
    expectAccepted('fgrep -rn x src', { model: 'fgrep', trees: ['src'], hidden: true });
    expectAccepted('egrep -e a|b -f pats a', { reads: ['pats', 'a'] });
    expectRefused('egrep -X x a', '-X');
  });
});

describe('R-SH-6 fd: a tree read like rg', () => {
  it('fd and fdfind search . or their paths, without hidden entries by default', () => {
    const fd = expectAccepted('fd ts', { model: 'fd', trees: ['.'], reads: [] });
    expect(fd.trees[0]?.hidden).toBe(false);
    expectAccepted('fdfind -e ts', { model: 'fdfind', trees: ['.'], hidden: false });
    expectAccepted('fd -t f -e md . docs src', { reads: ['docs', 'src'], trees: ['docs', 'src'], hidden: false });
    expectAccepted('fd . src', { trees: ['src'], hidden: false });
    expectAccepted('fd -d 2 -E node_modules --changed-within 1d x', { trees: ['.'], hidden: false });
    expectAccepted('fd --search-path src --search-path lib x', { reads: ['src', 'lib'], trees: ['src', 'lib'] });
  });

  it('-H, -u, a glob search, a dotted pattern and an ignore file reach hidden entries', () => {
    for (const command of ['fd -H env', 'fd -u env', 'fd --unrestricted env', 'fd -g *.ts', 'fd --glob x', 'fd .env', 'fd --and .git x', 'fd --ignore-file ig x']) {
      expectAccepted(command, { hidden: true });
    }
    expectAccepted('fd --ignore-file ig x', { reads: ['ig'] });
    expect(judge('fd -L x').trees[0]?.follow).toBe(true);
  });

  it('refuses what runs a program or moves the search', () => {
    expectRefused('fd -x rm', '--exec', /runs a program/);
    expectRefused('fd -e zip -x unzip -o {}', '--exec');
    expectRefused('fd -x rm -rf {}', '--exec');
    expectRefused('fd ts -X wc -l', '--exec-batch', /runs a program/);
    expectRefused('fdfind --exec-batch=ls', '--exec-batch');
    expectRefused('fd -l', '--list-details', /runs ls/);
    expectRefused('fd --base-directory ~ -H id_rsa', '--base-directory', /another directory/);
    expectRefused('fd --hid x', undefined, /not one this model knows/);
  });
});

describe('R-SH-6 jq', () => {
  it('the first operand is the filter; the others are files it reads', () => {
    expectAccepted('jq .name package.json', { model: 'jq', reads: ['package.json'] });
    expectAccepted('jq -r .scripts.env a.json b.json', { reads: ['a.json', 'b.json'] });
    expectAccepted('jq -nr 1+2', { reads: [] });
    expectAccepted(words('jq -c --arg name', variable('USER'), '.name==$name a.json'), { reads: ['a.json'] });
    expectAccepted('jq --argjson n 3 --tab --indent 4 .x a', { reads: ['a'] });
    expectAccepted('jq -n --rawfile k notes.txt $k', { reads: ['notes.txt'] });
    expectAccepted('jq -n --slurpfile d data.json $d', { reads: ['data.json'] });
    expectAccepted('jq -n $ARGS --args a b', { reads: [] });
    expectAccepted('jq . a --jsonargs 1 2', { reads: ['a'] });
    expectAccepted('jq . -- -file', { reads: ['-file'] });
    expectAccepted('jq -e .ok - ', { reads: ['-'] });
    expectAccepted('jq input_line_number a', { reads: ['a'] });
  });

  it('refuses a filter that reads the environment or other files', () => {
    for (const filter of ['env', 'env.HOME', '$ENV', '$ENV.X', '"\\(env.X)"', '.a|env', 'input_filename', 'import "m" as m; 1', 'include "m"; 1', 'modulemeta', 'get_search_list', '..env']) {
      expectRefused(words('jq -n', { text: filter, static: true }), undefined, /reads/);
    }
    expect(jqFilterRefusal('.env')).toBeUndefined();
    expect(jqFilterRefusal('.a.env | .ENV')).toBeUndefined();
    expect(jqFilterRefusal('.environment')).toBeUndefined();
  });

  it('refuses a filter in a file, module paths, test files and filters not statically known', () => {
    expectRefused('jq -f prog.jq a', '--from-file', /filter from a file/);
    expectRefused('jq -nf prog.jq', '--from-file');
    expectRefused('jq --from-file prog.jq', '--from-file');
    expectRefused('jq -L lib .', '-L', /modules/);
    expectRefused('jq -Llib .', '-L');
    expectRefused('jq --run-tests t', '--run-tests');
    expectRefused(words('jq', variable('f')), undefined, /not statically known/);
    expectRefused(words('jq --', variable('f')), undefined, /not statically known/);
    expectRefused('jq --raw-output0 .', undefined, /not one this model knows/);
    expectRefused('jq -x .', undefined, /not one this model knows/);
    expectRefused('jq --arg a', '--arg', /takes 2 words/);
  });
});

describe('R-SH-6 test and [', () => {
  it.each([
    ['test -f README.md', ['README.md']],
    ['[ -d build ]', ['build']],
    ['[ -e a -a -r b ]', ['a', 'b']],
    ['[ ! -s a ]', ['a']],
    ['test a -nt b', ['a', 'b']],
    ['[ ( -L l ) -o -x x ]', ['l', 'x']],
    ['[ -z abc ]', []],
    ['[ abc = abc ]', []],
    ['[ 1 -lt 2 ]', []],
    ['test -t 1', []],
    ['[ -f ]', []],
    ['[ -f = -d ]', []],
    ['[ ]', []],
    ['test', []],
  ])('%s reads %j', (command, reads) => void expectAccepted(command, { reads }));

  it('a quoted plain variable may stand where bash does not look at its value', () => {
    expectAccepted(words('[', variable('x'), ']'), { reads: [] });
    expectAccepted(words('[ -n', variable('x'), ']'), { reads: [] });
    expectAccepted(words('[', variable('x'), '= yes ]'), { reads: [] });
    expectRefused(words('[', variable('x'), 'README.md ]'), undefined, /would decide/);
    expectRefused(words('[ -n', variable('x'), '-a -f README.md ]'), undefined, /would decide/);
    expectRefused(words('[ -f', variable('f'), ']'), undefined, /not statically known/);
  });

  it('refuses -v, -R, a missing ] and syntax errors', () => {
    expectRefused('test -v name', '-v', /subscript/);
    expectRefused('[ -v a[1] ]', '-v');
    expectRefused('[ -R name ]', '-R');
    expectRefused('[ -f a', undefined, /needs \] as its last word/);
    expectRefused('[ -q a ]', undefined, /syntax error/);
    expectRefused('[ a b c ]', undefined, /syntax error/);
    expectRefused('[ ( a ]', undefined, /syntax error/);
  });
});

describe('R-SH-6 command -v and type describe a name', () => {
  it('accepts the describing forms', () => {
    expectAccepted('command -v git', { model: 'command', reads: [] });
    expectAccepted('command -V ls cat', { reads: [] });
    expectAccepted('command -pv ls', { reads: [] });
    expectAccepted('type ls', { model: 'type', reads: [] });
    expectAccepted('type -t -a ls', { reads: [] });
    expectAccepted('type -P node', { reads: [] });
  });

  it('command without -v or -V runs its name: refused here, judged as that command by the parser', () => {
    expectRefused('command ls', undefined, /command ls runs ls/);
    expectRefused('command -p ls', undefined, /runs ls/);
    expectRefused('command', undefined, /runs nothing/);
    expectRefused('type --type ls', undefined, /not one this model knows/);
  });
});

describe('R-SH-6 gh read-only forms', () => {
  it.each([
    'gh pr list', 'gh pr list -s all -L 50 --json number,title', 'gh pr view 12', 'gh pr view 12 --comments', 'gh pr view -R o/r 12',
    'gh pr diff 12', 'gh pr diff 12 --patch', 'gh pr diff --name-only', 'gh pr checks 12', 'gh pr checks --watch', 'gh pr status',
    'gh issue view 3', 'gh issue list -l bug', 'gh issue status', 'gh run view 99', 'gh run view 99 --log', 'gh run view --log-failed -j 5',
    'gh run list -w ci.yml -b main', 'gh repo view', 'gh repo view o/r', 'gh release view v1', 'gh release list', 'gh workflow list',
    'gh workflow view ci.yml --yaml', 'gh search repos assent', 'gh search issues --repo o/r crash', 'gh search prs --merged x',
    'gh search commits fix', 'gh search code --language go func', 'gh status', 'gh auth status', 'gh auth status -a -h github.com',
    'gh api repos/{owner}/{repo}/pulls', 'gh api -X GET repos/o/r', 'gh api --paginate --jq .[].name repos/o/r/branches',
    'gh pr list --jq .[].number --json number', 'gh api -H Accept:application/vnd.github.raw repos/o/r/readme',
  ])('%s', (command) => void expectAccepted(command, { reads: [], writes: [] }));

  it('the forms that resolve the repository name it, so the edge checks its git configuration', () => {
    expect(judge('gh pr list').repository).toEqual({ chdir: [] });
    expect(judge('gh search repos x').repository).toBeUndefined();
  });

  it('refuses tokens, browsers, downloads, checkouts and writes', () => {
    expectRefused('gh auth token', undefined, /prints the auth token/);
    expectRefused('gh auth status -t', '--show-token', /token/);
    expectRefused('gh auth status --show-token', '--show-token');
    expectRefused('gh pr view 12 --web', '--web', /browser/);
    expectRefused('gh pr list -w', '--web');
    expectRefused('gh pr checkout 12', undefined, /worktree/);
    expectRefused('gh run download 99', undefined, /writes/);
    expectRefused('gh release download v1', undefined, /writes/);
    expectRefused('gh pr merge 12', undefined, /not one of the read-only forms/);
    expectRefused('gh repo clone o/r', undefined, /not one of the read-only forms/);
    expectRefused('gh pr view 12 --jq $ENV.GH_TOKEN --json title', '--jq', /environment/);
    expectRefused('gh api user --jq env', '--jq', /environment/);
  });

  it('gh api: only a GET of a GitHub endpoint', () => {
    expectRefused('gh api -X POST repos/o/r/issues', '--method', /not GET/);
    expectRefused('gh api --method=delete repos/o/r', '--method');
    expectRefused('gh api -f title=x repos/o/r/issues', '--raw-field', /parameter/);
    expectRefused('gh api -F n=1 repos/o/r', '--field');
    expectRefused('gh api --raw-field q=x graphql', '--raw-field');
    expectRefused('gh api --input body.json repos/o/r/issues', '--input', /request body/);
    expectRefused('gh api --hostname evil.example user', '--hostname', /another host/);
    expectRefused('gh api https://evil.example/x', undefined, /full URL/);
    expectRefused('gh api --verbose user', '--verbose', /headers/);
    expectRefused('gh api -H X-HTTP-Method-Override:DELETE repos/o/r', '--header', /Accept/);
  });
});

describe('R-SH-6 docker listing forms', () => {
  it.each([
    'docker ps', 'docker ps -a --format {{.Names}}', 'docker images', 'docker images -q node', 'docker image ls', 'docker image list',
    'docker container ls -a', 'docker container ps', 'docker inspect web', 'docker inspect -f {{.State.Status}} a b', 'docker logs web',
    'docker logs -f --tail 100 web', 'docker logs -n=20 web', 'docker version', 'docker info', 'docker system info', 'docker stats --no-stream',
    'docker network ls', 'docker volume ls -q', 'docker --log-level=error ps', 'docker -D ps', 'docker --version', 'docker --tlscacert ca.pem ps',
  ])('%s', (command) => void expectAccepted(command, { writes: [] }));

  it('refuses other daemons and configurations, other subcommands, and stats that never end', () => {
    expectRefused('docker -H tcp://evil:2375 ps', '--host', /another configuration or daemon/);
    expectRefused('docker --host=unix:///x ps', '--host');
    expectRefused('docker --config /tmp/c ps', '--config');
    expectRefused('docker -c remote ps', '--context');
    expectRefused('docker run alpine', undefined, /not one of the listing forms/);
    expectRefused('docker exec web sh', undefined, /not one of the listing forms/);
    expectRefused('docker cp web:/etc/passwd .', undefined, /not one of the listing forms/);
    expectRefused('docker container rm web', undefined, /not one of the listing forms/);
    expectRefused('docker stats', undefined, /--no-stream/);
    expectRefused('docker ps --all=false', undefined, /takes no value/);
    expectRefused('docker logs a b', undefined, /more than docker logs takes/);
  });
});
