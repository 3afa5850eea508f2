// The part of picomatch's API that core uses (the package ships no types).
declare module 'picomatch/posix.js' {
  interface PicomatchOptions {
    dot?: boolean;
    bash?: boolean;
    strictBrackets?: boolean;
    nocase?: boolean;
  }
  interface Picomatch {
    makeRe(glob: string, options?: PicomatchOptions): RegExp;
  }
  const picomatch: Picomatch;
  export default picomatch;
}
