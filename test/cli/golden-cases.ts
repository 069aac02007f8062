/**
 * The kvspace golden cases: command lines and exactly what they print. Each script runs in order
 * against a fresh, empty store, so later cases see what earlier ones wrote (unless the script is
 * `independent`). The table knows nothing of how the store is reached: the same scripts run on
 * the embedded store and against a byteseek server (KVSPACE=http://…), in-process through
 * `runKvspace`; `CONTRACT` runs as real child processes.
 *
 * Over 400 lines: it is data (the scripts and their expected output), not logic; one table keeps the order the scripts depend on.
 */
export interface GoldenCase {
  name: string;
  args: string[];
  /** Written to stdin (for `import -`). */
  stdin?: string;
  /** Send SIGINT after this many stdout lines (`watch` runs until interrupted). */
  interruptAfterLines?: number;
  stdout: string;
  /** Default: empty. */
  stderr?: string;
  /** Default: 0. */
  code?: number;
  /** Settings of this case beyond the script's (e.g. BYTESEEK_SEED). */
  env?: NodeJS.ProcessEnv;
}

export interface GoldenScript {
  name: string;
  /** The cases do not depend on each other: each may run on a fresh store, concurrently. */
  independent?: boolean;
  /**
   * Calls tools: the store holds the shipped declarations, prompts and policy (as every entry point
   * writes them on open). Other scripts run with BYTESEEK_SEED=0, on a store that starts empty.
   */
  seeded?: boolean;
  cases: GoldenCase[];
}

/** Every subcommand and literal on a store that grows, then is cleared and imported into. */
const editing: GoldenCase[] = [
  { name: "get absent key prints (nil)", args: ["get", "/missing"], stdout: "/missing\t(nil)\n" },
  { name: "set int", args: ["set", "/app/n", "int:42"], stdout: "" },
  { name: "set int at the int64 minimum", args: ["set", "/app/neg", "int:-9223372036854775808"], stdout: "" },
  { name: "set float without a fraction", args: ["set", "/app/f", "float:2"], stdout: "" },
  { name: "set float", args: ["set", "/app/pi", "float:3.5"], stdout: "" },
  { name: "set bool true", args: ["set", "/app/yes", "bool:true"], stdout: "" },
  { name: "set bool false", args: ["set", "/app/no", "bool:false"], stdout: "" },
  {
    name: "set string keeps everything after the first colon",
    args: ["set", "/app/s", "string:a:b  c"],
    stdout: "",
  },
  { name: "set json", args: ["set", "/app/j", 'json:{"a": [1, 2.5, "x"], "b": null}'], stdout: "" },
  { name: "set ro", args: ["set", "/app/ro", "string:locked", "ro"], stdout: "" },
  {
    name: "get prints kind:value, directories, and (nil)",
    args: [
      "get",
      "/app/n",
      "/app/neg",
      "/app/f",
      "/app/pi",
      "/app/yes",
      "/app/no",
      "/app/s",
      "/app/j",
      "/app/ro",
      "/app/",
      "/nope",
    ],
    stdout:
      '/app/n\tint64:42\n/app/neg\tint64:-9223372036854775808\n/app/f\tfloat64:2.0\n/app/pi\tfloat64:3.5\n/app/yes\tbool:true\n/app/no\tbool:false\n/app/s\tchar/utf8:a:b  c\n/app/j\tjson:{"a":[1,2.5,"x"],"b":null}\n/app/ro\tchar/utf8:locked\n/app/\tindex:(9)\n/nope\t(nil)\n',
  },
  {
    name: "head prints metadata",
    args: ["head", "/app/n", "/app/ro", "/app/", "/nope"],
    stdout:
      "/app/n\tint64\tro=0\tversion=1\tcreateRev=1\tmodRev=1\n/app/ro\tchar/utf8\tro=1\tversion=1\tcreateRev=9\tmodRev=9\n/app/\tindex\tro=0\tversion=1\tcreateRev=1\tmodRev=1\n/nope\t(nil)\n",
  },
  {
    name: "set on a read-only key fails",
    args: ["set", "/app/ro", "string:again"],
    stdout: "",
    stderr: "/app/ro is read-only; force the write or mark it writable first\n",
    code: 1,
  },
  {
    name: "set --force rw writes a read-only key and clears the flag",
    args: ["set", "/app/ro", "string:again", "rw", "--force"],
    stdout: "",
  },
  {
    name: "head shows the cleared flag",
    args: ["head", "/app/ro"],
    stdout: "/app/ro\tchar/utf8\tro=0\tversion=2\tcreateRev=9\tmodRev=10\n",
  },
  { name: "set bumps the version", args: ["set", "/app/n", "int:43"], stdout: "" },
  { name: "set bumps it again", args: ["set", "/app/n", "int:44"], stdout: "" },
  {
    name: "history lists previous versions, newest first",
    args: ["history", "/app/n"],
    stdout: "/app/n\tversion=2\tmodRev=11\tint64:43\n/app/n\tversion=1\tmodRev=1\tint64:42\n",
  },
  {
    name: "history of an absent key prints nothing, and says why on stderr",
    args: ["history", "/app/absent"],
    stdout: "",
    stderr: "kvspace history: /app/absent does not exist, and no previous versions of it are kept\n",
  },
  { name: "set nil: deletes", args: ["set", "/app/no", "nil:"], stdout: "" },
  { name: "get after nil:", args: ["get", "/app/no"], stdout: "/app/no\t(nil)\n" },
  { name: "mkindex creates parents", args: ["mkindex", "/app/sub/deep/"], stdout: "" },
  { name: "set under a directory", args: ["set", "/app/sub/x", "int:1"], stdout: "" },
  { name: "set numeric name 10", args: ["set", "/app/sub/10", "int:10"], stdout: "" },
  { name: "set numeric name 9", args: ["set", "/app/sub/9", "int:9"], stdout: "" },
  {
    name: "set a value beside a directory of the same name",
    args: ["set", "/app/sub", "string:beside"],
    stdout: "",
  },
  { name: "set a system entry", args: ["set", "/app/‥hidden", "int:0"], stdout: "" },
  { name: "get reads a system entry", args: ["get", "/app/‥hidden"], stdout: "/app/‥hidden\tint64:0\n" },
  {
    name: "list prints name, kind, value; directories with their count",
    args: ["list", "/app/"],
    stdout:
      'f\tfloat64\t2.0\nj\tjson\t{"a":[1,2.5,"x"],"b":null}\nn\tint64\t44\nneg\tint64\t-9223372036854775808\npi\tfloat64\t3.5\nro\tchar/utf8\tagain\ns\tchar/utf8\ta:b  c\nsub\tchar/utf8\tbeside\nsub/\tindex\t(4)\nyes\tbool\ttrue\n',
  },
  {
    name: "ls --kind=false leaves kinds out",
    args: ["ls", "--kind=false", "/app/"],
    stdout:
      'f\t2.0\nj\t{"a":[1,2.5,"x"],"b":null}\nn\t44\nneg\t-9223372036854775808\npi\t3.5\nro\tagain\ns\ta:b  c\nsub\tbeside\nsub/\t(4)\nyes\ttrue\n',
  },
  {
    name: "ls orders numeric names numerically",
    args: ["ls", "/app/sub/"],
    stdout: "9\tint64\t9\n10\tint64\t10\ndeep/\tindex\t(0)\nx\tint64\t1\n",
  },
  { name: "ls of an empty directory prints nothing", args: ["ls", "/app/sub/deep/"], stdout: "" },
  {
    name: "tree draws the subtree",
    args: ["tree", "/app/"],
    stdout:
      '/app/\n├── f\t2.0\n├── j\t{"a":[1,2.5,"x"],"b":null}\n├── n\t44\n├── neg\t-9223372036854775808\n├── pi\t3.5\n├── ro\tagain\n├── s\ta:b  c\n├── sub\tbeside\n├── sub/\n│   ├── 9\t9\n│   ├── 10\t10\n│   ├── deep/\n│   └── x\t1\n└── yes\ttrue\n',
  },
  {
    name: "tree --kind shows kinds",
    args: ["tree", "--kind", "/"],
    stdout:
      '/\n└── app/\n    ├── f\tfloat64\t2.0\n    ├── j\tjson\t{"a":[1,2.5,"x"],"b":null}\n    ├── n\tint64\t44\n    ├── neg\tint64\t-9223372036854775808\n    ├── pi\tfloat64\t3.5\n    ├── ro\tchar/utf8\tagain\n    ├── s\tchar/utf8\ta:b  c\n    ├── sub\tchar/utf8\tbeside\n    ├── sub/\n    │   ├── 9\tint64\t9\n    │   ├── 10\tint64\t10\n    │   ├── deep/\n    │   └── x\tint64\t1\n    └── yes\tbool\ttrue\n',
  },
  { name: "append creates 0", args: ["append", "/log/", "string:first"], stdout: "/log/0\n" },
  { name: "append creates 1", args: ["append", "/log/", 'json:[1,{"k":true}]'], stdout: "/log/1\n" },
  { name: "append creates 2", args: ["append", "/log/", "float:-0.25"], stdout: "/log/2\n" },
  {
    name: "list the appended children",
    args: ["ls", "/log/"],
    stdout: '0\tchar/utf8\tfirst\n1\tjson\t[1,{"k":true}]\n2\tfloat64\t-0.25\n',
  },
  {
    name: "export a directory as NDJSON",
    args: ["export", "/log/"],
    stdout:
      '{"key":"/log/","kind":"index"}\n{"key":"/log/0","kind":"char/utf8","value":"first"}\n{"key":"/log/1","kind":"json","value":[1,{"k":true}]}\n{"key":"/log/2","kind":"float64","value":-0.25}\n',
  },
  {
    name: "del several keys, absent ones included",
    args: ["del", "/app/f", "/app/absent", "/app/pi"],
    stdout: "",
  },
  { name: "get after del", args: ["get", "/app/f", "/app/pi"], stdout: "/app/f\t(nil)\n/app/pi\t(nil)\n" },
  { name: "deltree a directory", args: ["deltree", "/app/sub/"], stdout: "" },
  { name: "deltree of an absent directory is not an error", args: ["deltree", "/absent/"], stdout: "" },
  {
    name: "tree after deltree",
    args: ["tree", "/app/"],
    stdout:
      '/app/\n├── j\t{"a":[1,2.5,"x"],"b":null}\n├── n\t44\n├── neg\t-9223372036854775808\n├── ro\tagain\n├── s\ta:b  c\n├── sub\tbeside\n└── yes\ttrue\n',
  },
  {
    name: "watch --from replays puts, deletes and deltrees",
    args: ["watch", "/app/", "--from", "13"],
    interruptAfterLines: 11,
    stdout:
      "13\tdelete\t/app/no\n14\tput\t/app/sub/\tindex\n14\tput\t/app/sub/deep/\tindex\n15\tput\t/app/sub/x\tint64:1\n16\tput\t/app/sub/10\tint64:10\n17\tput\t/app/sub/9\tint64:9\n18\tput\t/app/sub\tchar/utf8:beside\n19\tput\t/app/‥hidden\tint64:0\n23\tdelete\t/app/f\n24\tdelete\t/app/pi\n25\tdeltree\t/app/sub/\n",
  },
  {
    name: "clear empties the store (-o json: its revision, and whether /byteseek/ was seeded again)",
    args: ["clear", "--yes", "-o", "json"],
    stdout: '{"rev":26,"seeded":false}\n',
    stderr: "cleared; /byteseek/ left empty (BYTESEEK_SEED=0)\n",
  },
  { name: "tree of an empty store", args: ["tree", "/"], stdout: "/\n" },
  { name: "export of an empty store", args: ["export"], stdout: "" },
  {
    name: "import a file",
    args: ["import", "test/fixtures/cli-import.ndjson"],
    stdout: "imported\t5\trev=27\n",
  },
  {
    name: "tree --kind of the import",
    args: ["tree", "--kind", "/imp/"],
    stdout:
      '/imp/\n├── big\tint64\t9223372036854775807\n├── doc\tjson\t{"tools":["edit.read"]}\n├── empty/\n└── inf\tfloat64\t-Infinity\n',
  },
  {
    name: "head of an imported read-only key",
    args: ["head", "/imp/doc"],
    stdout: "/imp/doc\tjson\tro=1\tversion=1\tcreateRev=27\tmodRev=27\n",
  },
  {
    name: "export the whole store",
    args: ["export"],
    stdout:
      '{"key":"/imp/","kind":"index"}\n{"key":"/imp/big","kind":"int64","value":"9223372036854775807"}\n{"key":"/imp/doc","kind":"json","value":{"tools":["edit.read"]},"ro":true}\n{"key":"/imp/empty/","kind":"index"}\n{"key":"/imp/inf","kind":"float64","value":"-Infinity"}\n',
  },
];

/** Invalid keys and literals, usage errors: each case stands alone, on an empty store of its own. */
const errors: GoldenCase[] = [
  {
    name: "relative key",
    args: ["get", "a"],
    stdout: "",
    stderr: "invalid key \"a\": a key must be absolute: start it with '/'\n",
    code: 1,
  },
  {
    name: "empty segment",
    args: ["get", "/a//b"],
    stdout: "",
    stderr: "invalid key \"/a//b\": a key must not contain '//' (an empty segment)\n",
    code: 1,
  },
  {
    name: "dot-dot segment",
    args: ["set", "/a/../b", "int:1"],
    stdout: "",
    stderr: "invalid key \"/a/../b\": a key must not contain '.' or '..' segments\n",
    code: 1,
  },
  {
    name: "control character",
    args: ["head", "/a/\u0001"],
    stdout: "",
    stderr: 'invalid key "/a/\\u0001": a key must not contain NUL or other control characters\n',
    code: 1,
  },
  {
    name: "too deep",
    args: [
      "get",
      "/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a",
    ],
    stdout: "",
    stderr:
      'invalid key "/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a…": a key must have at most 64 levels\n',
    code: 1,
  },
  {
    name: "a value key ending in /",
    args: ["set", "/app/", "int:1"],
    stdout: "",
    stderr: "invalid key \"/app/\": a value key must not end with '/' (that names a directory)\n",
    code: 1,
  },
  // A directory key without its trailing slash, refused alike by each command taking a directory.
  ...(
    [
      ["list", "ls"],
      ["deltree", "deltree"],
      ["mkindex", "mkindex"],
    ] as const
  ).map(([what, command]) => ({
    name: `${what} needs the trailing slash`,
    args: [command, "/app"],
    stdout: "",
    stderr: "invalid key \"/app\": a directory key must end with '/'\n",
    code: 1,
  })),
  {
    name: "history of a directory",
    args: ["history", "/app/"],
    stdout: "",
    stderr: "invalid key \"/app/\": a value key must not end with '/' (that names a directory)\n",
    code: 1,
  },
  {
    name: "listing an absent directory",
    args: ["ls", "/absent/"],
    stdout: "",
    stderr: "kvspace list: no directory /absent/ (nothing listed)\n",
  },
  {
    name: "tree of an absent directory",
    args: ["tree", "/absent/"],
    stdout: "",
    stderr: "no directory /absent/\n",
    code: 1,
  },
  {
    name: "no colon",
    args: ["set", "/x", "42"],
    stdout: "",
    stderr: 'invalid literal "42": a literal is kind:value, e.g. int:42 or string:hello\n',
    code: 1,
  },
  {
    name: "unknown literal kind",
    args: ["set", "/x", "uint:1"],
    stdout: "",
    stderr:
      "invalid literal \"uint:1\": unknown literal kind 'uint'; use int:, float:, bool:, string:, json: or nil:\n",
    code: 1,
  },
  {
    name: "bad int",
    args: ["set", "/x", "int:4.5"],
    stdout: "",
    stderr: 'invalid literal "int:4.5": int: takes a decimal integer\n',
    code: 1,
  },
  {
    name: "int out of range",
    args: ["set", "/x", "int:9223372036854775808"],
    stdout: "",
    stderr: "int64 value out of range: 9223372036854775808\n",
    code: 1,
  },
  {
    name: "bad float",
    args: ["set", "/x", "float:abc"],
    stdout: "",
    stderr: 'invalid literal "float:abc": float: takes a number\n',
    code: 1,
  },
  {
    name: "empty float",
    args: ["set", "/x", "float:"],
    stdout: "",
    stderr: 'invalid literal "float:": float: takes a number\n',
    code: 1,
  },
  {
    name: "bad bool",
    args: ["set", "/x", "bool:yes"],
    stdout: "",
    stderr: 'invalid literal "bool:yes": bool: takes true or false\n',
    code: 1,
  },
  {
    name: "bad json",
    args: ["set", "/x", 'json:{"a":'],
    stdout: "",
    stderr: 'invalid literal "json:{\\"a\\":": json: takes valid JSON (Unexpected end of JSON input)\n',
    code: 1,
  },
  {
    name: "append nil",
    args: ["append", "/log/", "nil:"],
    stdout: "",
    stderr: "append needs a value: nil: is not one\n",
    code: 1,
  },
  {
    name: "append bad literal",
    args: ["append", "/log/", "int:x"],
    stdout: "",
    stderr: 'invalid literal "int:x": int: takes a decimal integer\n',
    code: 1,
  },
  {
    name: "import a missing file",
    args: ["import", "missing.ndjson"],
    stdout: "",
    stderr: "cannot import missing.ndjson: no such file\n",
    code: 1,
  },
  {
    name: "no subcommand",
    args: [],
    stdout: "",
    stderr:
      "Usage: kvspace <command> [args]\n\ninspect and edit the byteseek tree, and call its tools\n\nOptions:\n  -V, --version  print the version\n  -h, --help     print help\n\nCommands:\n  get            print values\n  set            write a value (nil: deletes; <dir/> index: makes a directory)\n  head           print metadata\n  del            delete keys\n  deltree        delete a directory and everything under it (/ and /byteseek/\n                 ask first)\n  mv|move        move a key or a directory in one revision\n  cp|copy        copy a key or a directory in one revision\n  mkindex        create a directory\n  clear          empty the whole store (asks first), then reseed /byteseek/\n  list|ls        list a directory's children\n  tree           draw a directory's subtree, one line per entry\n  grep           search the values (or keys) below a directory\n  append         add the next numbered child\n  watch          print changes as they happen, until interrupted\n  history        print a value's retained previous versions\n  export         write the store or a directory as NDJSON to stdout\n  import         load NDJSON (as export writes it) from a file or stdin\n  call           call a tool through the runtime (exit 3 unless ok)\n  tools          list or search the tool catalogue; --check: an invalid policy,\n                 declarations and MCP server entries (exit 3 if any)\n  prompt         print the system prompt and tool schemas the model would get\n                 next\n  approvals      list the calls waiting for a person's approval, with what each\n                 would run\n  approve        approve a call waiting at /byteseek/approval/<vid>/<n> (or\n                 accept an MCP server's question)\n  deny           deny a call waiting at /byteseek/approval/<vid>/<n> (or decline\n                 an MCP server's question)\n  policy         print the powers the policy grants a run, and its other rules\n  mcp            list the upstream MCP servers, or sync their tools into\n                 declarations\n  runs           list the runs (status, start, steps, calls, tokens), or diff\n                 two\n  help           print help for a command\n\nThe store is KVSPACE: a folder (default ./data), etcd://host:2379[/prefix], or a byteseek server's http:// URL (BYTESEEK_TOKEN).\nBYTESEEK_CLIENT_TIMEOUT: ms a server (at a URL, or holding the folder) may stay silent before a request fails (default 30000; 0: no bound).\nLiterals: int:42 float:3.5 bool:true string:text json:{...} nil: (delete); quote a value with spaces: 'string:hello world'.\nScripts: -o json|ndjson prints data as JSON (each command's --help says which it takes; README.md gives the shapes);\n-q/--quiet leaves notes and progress off stderr. get, set, head, del, list, mv, cp, grep, tree, history,\nappend, mkindex and export load only the tree.\nExit codes (stable): 0 ok, 1 an error, 2 a usage error (a bad flag value names those accepted),\n3 a tool call (or check) that answered anything but ok.\n\n",
    code: 2,
  },
  {
    name: "unknown subcommand",
    args: ["frobnicate", "/x"],
    stdout: "",
    stderr: "kvspace: unknown command 'frobnicate'\n(kvspace --help lists the commands)\n",
    code: 2,
  },
  {
    name: "get without a key",
    args: ["get"],
    stdout: "",
    stderr: "kvspace get: missing <key>\nusage: kvspace get <key>...\n",
    code: 2,
  },
  {
    name: "set without a literal",
    args: ["set", "/x"],
    stdout: "",
    stderr:
      "kvspace set: missing <literal>\nusage: kvspace set <key> <literal> [ro|rw] [vid] [--force] [--unchecked]\n",
    code: 2,
  },
  {
    name: "set with a bad mode",
    args: ["set", "/x", "int:1", "rx"],
    stdout: "",
    stderr:
      "kvspace set: 'rx' is not ro|rw — quote a value with spaces: kvspace set /x 'int:1 rx'\nusage: kvspace set <key> <literal> [ro|rw] [vid] [--force] [--unchecked]\n",
    code: 2,
  },
  {
    name: "head without a key",
    args: ["head"],
    stdout: "",
    stderr: "kvspace head: missing <key>\nusage: kvspace head <key>...\n",
    code: 2,
  },
  {
    name: "del without a key",
    args: ["del"],
    stdout: "",
    stderr: "kvspace del: missing <key>\nusage: kvspace del <key>... [--force]\n",
    code: 2,
  },
  {
    name: "deltree without a dir",
    args: ["deltree"],
    stdout: "",
    stderr: "kvspace deltree: missing <dir/>\nusage: kvspace deltree <dir/> [--force] [--yes]\n",
    code: 2,
  },
  {
    name: "mkindex without a dir",
    args: ["mkindex"],
    stdout: "",
    stderr: "kvspace mkindex: missing <dir/>\nusage: kvspace mkindex <dir/>\n",
    code: 2,
  },
  {
    name: "clear with an argument",
    args: ["clear", "/x"],
    stdout: "",
    stderr: "kvspace clear: unexpected argument '/x'\nusage: kvspace clear [--yes]\n",
    code: 2,
  },
  {
    name: "list without a dir",
    args: ["list"],
    stdout: "",
    stderr: "kvspace list: missing <dir/>\nusage: kvspace list|ls [--kind=false] <dir/>\n",
    code: 2,
  },
  {
    name: "ls with a bad flag value",
    args: ["ls", "--kind=maybe", "/app/"],
    stdout: "",
    stderr:
      "kvspace list: --kind takes true or false, got 'maybe'\nusage: kvspace list|ls [--kind=false] <dir/>\n",
    code: 2,
  },
  {
    name: "ls with an unknown flag",
    args: ["ls", "--frob", "/app/"],
    stdout: "",
    stderr:
      "kvspace list: unknown option '--frob'\nusage: kvspace list|ls [--kind=false] <dir/>\n(kvspace list --help for more)\n",
    code: 2,
  },
  {
    name: "tree without a dir",
    args: ["tree"],
    stdout: "",
    stderr: "kvspace tree: missing <dir/>\nusage: kvspace tree [--kind] [--full] [--depth N] <dir/>\n",
    code: 2,
  },
  {
    name: "append without a literal",
    args: ["append", "/log/"],
    stdout: "",
    stderr: "kvspace append: missing <literal>\nusage: kvspace append <dir/> <literal>\n",
    code: 2,
  },
  {
    name: "watch without a dir",
    args: ["watch"],
    stdout: "",
    stderr: "kvspace watch: missing <dir/>\nusage: kvspace watch <dir/> [--from REV]\n",
    code: 2,
  },
  {
    name: "watch with a bad --from",
    args: ["watch", "/", "--from", "x"],
    stdout: "",
    stderr:
      "kvspace watch: --from takes a revision (a whole number, e.g. --from 1), got 'x'\nusage: kvspace watch <dir/> [--from REV]\n",
    code: 2,
  },
  {
    name: "approve with a bad --scope names the scopes",
    args: ["approve", "run1/0", "--scope", "forever"],
    stdout: "",
    stderr:
      "kvspace approve: --scope takes once, run, always, got 'forever'\nusage: kvspace approve <vid>/<n> [--scope once|run|always] [--content JSON] [--reason R]\n",
    code: 2,
  },
  {
    name: "watch with --from missing its value",
    args: ["watch", "/", "--from"],
    stdout: "",
    stderr:
      "kvspace watch: option '--from <value>' argument missing\nusage: kvspace watch <dir/> [--from REV]\n(kvspace watch --help for more)\n",
    code: 2,
  },
  {
    name: "history without a key",
    args: ["history"],
    stdout: "",
    stderr: "kvspace history: missing <key>\nusage: kvspace history <key>\n",
    code: 2,
  },
  {
    name: "export with two dirs",
    args: ["export", "/a/", "/b/"],
    stdout: "",
    stderr: "kvspace export: unexpected argument '/b/'\nusage: kvspace export [<dir/>] [--secrets]\n",
    code: 2,
  },
  {
    name: "import without a source",
    args: ["import"],
    stdout: "",
    stderr: "kvspace import: missing <file|->\nusage: kvspace import <file|-> [--force] [--unchecked]\n",
    code: 2,
  },
  {
    name: "help on a subcommand",
    args: ["set", "--help"],
    stdout:
      "Usage: kvspace set <key> <literal> [ro|rw] [vid] [--force] [--unchecked]\n\nwrite a value (nil: deletes; <dir/> index: makes a directory)\n\nOptions:\n  --force                write even if the key is read-only\n  --unchecked            store a declaration or policy even if it does not\n                         validate\n  -o, --output <format>  print data as text | json\n  -q, --quiet            no notes or progress on stderr (errors still)\n  -h, --help             print help\n\nExamples:\n  kvspace set /notes/today 'string:hello world'     quote a literal with spaces or shell characters\n  kvspace set /cfg/limit int:10 ro                   read-only from now on (writing it again needs --force)\n  kvspace set /jobs/a 'json:{\"n\":1}' rw run7        writable, owned by run run7\n  kvspace set /queue/ index:                         a directory (as mkindex)\n\nA tool declaration (/byteseek/tools/<name>), the policy (/byteseek/policy, read-only: --force)\nor an MCP server entry (/byteseek/mcp/<name>) that does not validate is refused with its\nproblems; --unchecked stores it anyway, and kvspace tools --check reports it.\n\nPrints nothing; -o json prints the write: {key, rev, version} (nil: {key, rev, version, deleted}).\n\n",
  },
];

/** Import from stdin, all or nothing, and watch replaying what was imported. */
const input: GoldenCase[] = [
  {
    name: "import a bad line: nothing imported",
    args: ["import", "-"],
    stdin: '{"key":"/ok","kind":"int64","value":1}\n{"key":"bad","kind":"int64","value":1}\n',
    stdout: "",
    stderr:
      "import failed at line 2: invalid key \"bad\": a key must be absolute: start it with '/'; nothing was imported\n",
    code: 1,
  },
  { name: "nothing of a failed import was written", args: ["get", "/ok"], stdout: "/ok\t(nil)\n" },
  {
    name: "import from stdin",
    args: ["import", "-"],
    stdin:
      '{"key":"/in/a","kind":"bool","value":false}\n{"key":"/in/b","kind":"char/utf8","value":"tab\\there"}\n',
    stdout: "imported\t2\trev=1\n",
  },
  {
    name: "get what stdin imported",
    args: ["get", "/in/a", "/in/b"],
    stdout: "/in/a\tbool:false\n/in/b\tchar/utf8:tab\there\n",
  },
  {
    name: "watch replays from a revision, until SIGINT",
    args: ["watch", "/", "--from", "1"],
    interruptAfterLines: 3,
    stdout: "1\tput\t/in/\tindex\n1\tput\t/in/a\tbool:false\n1\tput\t/in/b\tchar/utf8:tab\there\n",
  },
];

/** Every built-in byteseek ships, as a refusal of an unknown `ref` lists them. */
const SHIPPED_REFS =
  "edit.glob, edit.grep, edit.ls, edit.multi, edit.read, edit.rename, edit.replace, edit.write, shell.run, tools.search, tree.del, tree.get, tree.list, tree.set";

/** The last line of every refused declaration or policy write. */
const UNCHECKED_HINT =
  "Fix the value (docs/TOOLS.md lists every field), or store it anyway with --unchecked (kvspace set|import; HTTP ?unchecked=1); kvspace tools --check then reports it\n";

/** Declarations a person writes with `kvspace set`, for the tool calls below. */
const DECLARE = {
  echo: {
    name: "text.echo",
    description: "print a text",
    snippet: "text.echo(text) — print a text",
    params: {
      type: "object",
      properties: { text: { type: "string" } },
      required: ["text"],
      additionalProperties: false,
    },
    impl: { kind: "shell", argv: ["echo", "{text}"] },
  },
  fail: {
    name: "text.fail",
    description: "always fails",
    params: { type: "object", properties: {} },
    impl: { kind: "shell", argv: ["false"] },
  },
  gated: {
    name: "text.gated",
    description: "needs approval",
    confirm: true,
    params: { type: "object", properties: {} },
    impl: { kind: "shell", argv: ["echo", "approved"] },
  },
  off: {
    name: "text.off",
    description: "switched off",
    enabled: false,
    params: { type: "object", properties: {} },
    impl: { kind: "shell", argv: ["true"] },
  },
  broken: { name: "text.broken", params: { type: "string" }, impl: { kind: "telepathy" } },
};
const declare = (name: keyof typeof DECLARE): GoldenCase => ({
  name: `declare ${DECLARE[name].name}`,
  args: ["set", `/byteseek/tools/${DECLARE[name].name}`, `json:${JSON.stringify(DECLARE[name])}`],
  stdout: "",
});

/** `call` and `tools`: every result kind, exit 0 for ok and 3 for the rest, records under the vid. */
const tools: GoldenCase[] = [
  declare("echo"),
  declare("fail"),
  declare("gated"),
  declare("off"),
  {
    name: "the shipped catalogue is valid: --check prints nothing and exits 0",
    args: ["tools", "--check"],
    stdout: "",
  },
  {
    name: "ok: a hostile argument is just a string",
    args: ["call", "text.echo", '{"text":"hi; $(rm -rf /) `x`"}'],
    stdout: "hi; $(rm -rf /) `x`\n",
  },
  {
    name: "arg: a missing argument, with the signature",
    args: ["call", "text.echo", "{}"],
    stdout:
      "Invalid arguments for text.echo:\n- text: expected a value (this argument is required)\nSignature: text.echo(text: string)\nFix the arguments and call again.\n",
    code: 3,
  },
  {
    name: "runtime: a failing command",
    args: ["call", "text.fail"],
    stdout: '"false" exited with code 1. Output: (no output)\n',
    code: 3,
  },
  {
    name: "denied: confirmation needed",
    args: ["call", "text.gated", "{}"],
    stdout:
      "text.gated needs the user's approval (rule: declaration.confirm): ask the user, and call it again once they approve\n",
    code: 3,
  },
  { name: "ok: --approve", args: ["call", "text.gated", "--approve"], stdout: "approved\n" },
  {
    name: "vet: a disabled tool",
    args: ["call", "text.off", "{}"],
    stdout:
      "text.off is switched off (enabled: false in /byteseek/tools/text.off); use another tool, or ask the user to switch it on\n",
    code: 3,
  },
  {
    name: "--json prints the result object on one line; --vid names the run",
    args: ["call", "--json", "text.gated", "--vid", "run-1"],
    stdout:
      '{"kind":"denied","isError":true,"text":"text.gated needs the user\'s approval (rule: declaration.confirm): ask the user, and call it again once they approve","details":{"code":"needs_approval","reason":"text.gated needs the user\'s approval (rule: declaration.confirm): ask the user, and call it again once they approve","rule":"declaration.confirm","effect":{"kind":"shell","argv":["echo","approved"],"text":"echo approved"},"owner":"person","hash":"4be5fda9d942dea8b1b5c4f811afb6533e9bd98e2550158ea581988b8732c129"},"record":"/byteseek/tool/run-1/0"}\n',
    code: 3,
  },
  {
    name: "policy prints what the default grant holds and the other rules",
    args: ["policy", "--vid", "run-1"],
    stdout:
      "workspace\t{workspace}\ngrant\tgrants.default\nread\ttrue\nwrite\ttrue\nexec\ttrue\nmodel\ttrue\nnet\t-\ntree\t/\nconfirm\t-\napproved\t-\ndeny\t-\ndenyKeys\t/byteseek/llm/\nworkspaceRoots\t-\napprovalTimeoutMs\t600000\nsandbox\ton\n",
  },
  {
    name: "bad JSON arguments are a usage error",
    args: ["call", "text.echo", "{text: hi}"],
    stdout: "",
    stderr:
      'invalid JSON arguments "{text: hi}": Expected property name or \'}\' in JSON at position 1\npass one JSON object, e.g. kvspace call tree.get \'{"key":"/a"}\'\nusage: kvspace call <name> [<json args>] [--vid V] [--approve] [--json]\n',
    code: 2,
  },
  {
    name: "call without a name",
    args: ["call"],
    stdout: "",
    stderr:
      "kvspace call: missing <name>\nusage: kvspace call <name> [<json args>] [--vid V] [--approve] [--json]\n",
    code: 2,
  },
  {
    name: "a declaration that does not validate is refused with its problems, and nothing is written",
    args: declare("broken").args,
    stdout: "",
    stderr:
      "/byteseek/tools/text.broken is not a valid tool declaration, so it was not written:\n- description: missing (expected string)\n- params: params must be an object schema: {\"type\": \"object\", …}\n- impl.kind: Invalid discriminator value. Expected 'builtin' | 'shell' | 'http' | 'llm' | 'mcp'\n" +
      UNCHECKED_HINT,
    code: 1,
  },
  {
    name: "the refused declaration is absent",
    args: ["get", "/byteseek/tools/text.broken"],
    stdout: "/byteseek/tools/text.broken\t(nil)\n",
  },
  {
    ...declare("broken"),
    name: "--unchecked stores it anyway",
    args: [...declare("broken").args, "--unchecked"],
  },
  {
    name: "tools --check lists the problems and exits 3",
    args: ["tools", "--check"],
    stdout:
      "text.broken\tdescription: missing (expected string)\ntext.broken\tparams: params must be an object schema: {\"type\": \"object\", …}\ntext.broken\timpl.kind: Invalid discriminator value. Expected 'builtin' | 'shell' | 'http' | 'llm' | 'mcp'\n",
    code: 3,
  },
  {
    name: "vet: an invalid declaration",
    args: ["call", "text.broken"],
    stdout:
      "text.broken cannot be called: its declaration at /byteseek/tools/text.broken is invalid:\n- description: missing (expected string)\n- params: params must be an object schema: {\"type\": \"object\", …}\n- impl.kind: Invalid discriminator value. Expected 'builtin' | 'shell' | 'http' | 'llm' | 'mcp'\nFix the declaration (tree.set /byteseek/tools/text.broken) or use another tool.\n",
    code: 3,
  },
  {
    name: "a record landed for every call, under vid cli unless --vid",
    args: ["ls", "/byteseek/tool/"],
    stdout: "cli/\tindex\t(7)\nrun-1/\tindex\t(1)\n",
  },
];

/** What a newcomer meets: suggestions, refusals that say what to do, upstream kvspace's spellings, tree's one-line drawing. */
const guidance: GoldenCase[] = [
  {
    name: "a typo'd command is answered with the nearest one",
    args: ["gte", "/x"],
    stdout: "",
    stderr: "kvspace: unknown command 'gte'\n(Did you mean get?)\n(kvspace --help lists the commands)\n",
    code: 2,
  },
  {
    name: "a typo'd flag is answered with the nearest one",
    args: ["tree", "--dept", "1", "/"],
    stdout: "",
    stderr:
      "kvspace tree: unknown option '--dept'\n(Did you mean --depth?)\nusage: kvspace tree [--kind] [--full] [--depth N] <dir/>\n(kvspace tree --help for more)\n",
    code: 2,
  },
  {
    name: "an unquoted value with spaces is named, with the quoted line",
    args: ["set", "/notes/today", "string:hello", "world"],
    stdout: "",
    stderr:
      "kvspace set: 'world' is not ro|rw — quote a value with spaces: kvspace set /notes/today 'string:hello world'\nusage: kvspace set <key> <literal> [ro|rw] [vid] [--force] [--unchecked]\n",
    code: 2,
  },
  {
    name: "a fifth argument is named too",
    args: ["set", "/n", "string:a", "ro", "v1", "b"],
    stdout: "",
    stderr:
      "kvspace set: 'b' is unexpected after the owner vid — quote a value with spaces: kvspace set /n 'string:a ro v1 b'\nusage: kvspace set <key> <literal> [ro|rw] [vid] [--force] [--unchecked]\n",
    code: 2,
  },
  {
    name: "a malformed owner vid is refused",
    args: ["set", "/n", "int:1", "rw", "a b"],
    stdout: "",
    stderr:
      "kvspace set: 'a b' is not a run id (letters, digits and _.:@-, at most 128)\nusage: kvspace set <key> <literal> [ro|rw] [vid] [--force] [--unchecked]\n",
    code: 2,
  },
  { name: "set <dir/> index: makes a directory (upstream)", args: ["set", "/u/", "index:"], stdout: "" },
  { name: "set <dir/> index: on an existing one is a no-op", args: ["set", "/u/", "index:"], stdout: "" },
  {
    name: "index: needs a directory key",
    args: ["set", "/u", "index:"],
    stdout: "",
    stderr:
      "kvspace set: index: makes a directory, and a directory's key ends with /: /u/\nusage: kvspace set <key> <literal> [ro|rw] [vid] [--force] [--unchecked]\n",
    code: 2,
  },
  {
    name: "set with the owner vid as fourth argument (upstream)",
    args: ["set", "/u/c", "string:hello", "ro", "7"],
    stdout: "",
  },
  {
    name: "the owner vid is kept",
    args: ["export", "/u/"],
    stdout:
      '{"key":"/u/","kind":"index"}\n{"key":"/u/c","kind":"char/utf8","value":"hello","ro":true,"vid":"7"}\n',
  },
  {
    name: "get of a directory without the slash says the directory is there",
    args: ["get", "/u"],
    stdout: "/u\t(nil)\n",
    stderr: "kvspace get: /u holds no value, but /u/ is a directory (1 entries): kvspace list /u/\n",
  },
  {
    name: "list of a missing directory prints nothing and exits 0 (upstream), with a note",
    args: ["list", "/u/empty/"],
    stdout: "",
    stderr: "kvspace list: no directory /u/empty/ (nothing listed)\n",
  },
  { name: "a multi-line value", args: ["set", "/u/m", "string:line one\nline two\r\nthree"], stdout: "" },
  {
    name: "a long value",
    args: ["set", "/u/long", `string:${"é".repeat(30)}${"x".repeat(40)}`],
    stdout: "",
  },
  { name: "a nested value", args: ["set", "/u/d/e/f", "int:1"], stdout: "" },
  {
    name: "tree draws one line per entry: line breaks as ↵, values cut to 60 characters",
    args: ["tree", "/u/"],
    stdout: `/u/\n├── c\thello\n├── d/\n│   └── e/\n│       └── f\t1\n├── long\t${"é".repeat(30)}${"x".repeat(29)}…\n└── m\tline one↵line two↵three\n`,
  },
  {
    name: "tree --full shows values whole, still one line each",
    args: ["tree", "--full", "/u/"],
    stdout: `/u/\n├── c\thello\n├── d/\n│   └── e/\n│       └── f\t1\n├── long\t${"é".repeat(30)}${"x".repeat(40)}\n└── m\tline one↵line two↵three\n`,
  },
  {
    name: "tree --depth 1 draws the children only, a directory with its count",
    args: ["tree", "--depth", "1", "/u/"],
    stdout: `/u/\n├── c\thello\n├── d/\t(1)\n├── long\t${"é".repeat(30)}${"x".repeat(29)}…\n└── m\tline one↵line two↵three\n`,
  },
  {
    name: "tree --depth=2 --showext=false (upstream's flag, a no-op)",
    args: ["tree", "--depth=2", "--showext=false", "/u/d/"],
    stdout: "/u/d/\n└── e/\n    └── f\t1\n",
  },
  {
    name: "tree --depth takes a whole number",
    args: ["tree", "--depth", "0", "/u/"],
    stdout: "",
    stderr:
      "kvspace tree: --depth takes a whole number from 1, got '0'\nusage: kvspace tree [--kind] [--full] [--depth N] <dir/>\n",
    code: 2,
  },
  {
    name: "clear without a terminal needs --yes, and deletes nothing",
    args: ["clear"],
    stdout: "",
    stderr:
      "kvspace would empty the whole store at {store}; there is no terminal to ask on, so confirm with --yes: kvspace clear --yes\n",
    code: 1,
  },
  {
    name: "deltree / without a terminal needs --yes",
    args: ["deltree", "/"],
    stdout: "",
    stderr:
      "kvspace would delete / and everything under it, read-only keys included; there is no terminal to ask on, so confirm with --yes: kvspace deltree / --yes\n",
    code: 1,
  },
  {
    name: "deltree /byteseek/ without a terminal needs --yes",
    args: ["deltree", "/byteseek/"],
    stdout: "",
    stderr:
      "kvspace would delete /byteseek/ and everything under it, read-only keys included; there is no terminal to ask on, so confirm with --yes: kvspace deltree /byteseek/ --yes\n",
    code: 1,
  },
  { name: "nothing was deleted", args: ["get", "/u/c"], stdout: "/u/c\tchar/utf8:hello\n" },
  { name: "a read-only value", args: ["set", "/u/ro", "int:1", "ro"], stdout: "" },
  {
    name: "-o names the formats a command takes",
    args: ["get", "-o", "yaml", "/u/c"],
    stdout: "",
    stderr: "kvspace get: -o takes text, json, ndjson here, got 'yaml'\nusage: kvspace get <key>...\n",
    code: 2,
  },
  {
    name: "get -o json: an absent key is {key, absent}",
    args: ["get", "-o", "json", "/u/nope"],
    stdout: '{"key":"/u/nope","absent":true}\n',
  },
  { name: "deltree of another directory does not ask", args: ["deltree", "/u/d/"], stdout: "" },
  {
    name: "deltree / --yes deletes, read-only keys too (no --force), and says how much",
    args: ["deltree", "/", "--yes"],
    stdout: "",
    stderr: "deleted / (5 keys)\n",
  },
  { name: "the store is empty", args: ["tree", "/"], stdout: "/\n" },
];

const POLICY_FIELDS =
  "workspaceRoots, deny, denyKeys, confirm, approved, approvalTimeoutMs, grants, agentImpls, httpHosts, defaultTimeoutMs, maxTimeoutMs, passEnv, outputCapBytes, toolList, agentTools, resumeUnknown, sandbox, limits, credentialPaths";
const POLICY_TYPO = `grantz: unknown field (did you mean grants?); the fields are ${POLICY_FIELDS}`;
const MCP_UP_PROBLEMS = [
  "command: Too small: expected array to have >=1 items",
  "enabled: Invalid input: expected boolean, received string",
];
const TYPO_POLICY = ["set", "/byteseek/policy", 'json:{"grantz":{}}', "ro", "--force"];

/** Writes of the policy and of declarations are checked: refused with the problems, stored only with --unchecked. */
const checked: GoldenCase[] = [
  {
    name: "a policy with an unknown field is refused, naming the field and the nearest known one",
    args: TYPO_POLICY,
    stdout: "",
    stderr: `/byteseek/policy is not a valid policy, so it was not written:\n- ${POLICY_TYPO}\n${UNCHECKED_HINT}`,
    code: 1,
  },
  {
    name: "the policy in force is still the default",
    args: ["policy"],
    stdout:
      "workspace\t{workspace}\ngrant\tgrants.default\nread\ttrue\nwrite\ttrue\nexec\ttrue\nmodel\ttrue\nnet\t-\ntree\t/\nconfirm\t-\napproved\t-\ndeny\t-\ndenyKeys\t/byteseek/llm/\nworkspaceRoots\t-\napprovalTimeoutMs\t600000\nsandbox\ton\n",
  },
  {
    name: "a policy that is not json is refused",
    args: ["set", "/byteseek/policy", "string:allow everything", "ro", "--force"],
    stdout: "",
    stderr: `/byteseek/policy is not a valid policy, so it was not written:\n- a policy is a json value, not char/utf8: write it as json:{…}\n${UNCHECKED_HINT}`,
    code: 1,
  },
  { name: "--unchecked stores the policy anyway", args: [...TYPO_POLICY, "--unchecked"], stdout: "" },
  {
    name: "tools --check reports the stored invalid policy (every tool is blocked by it) and exits 3",
    args: ["tools", "--check"],
    stdout: `/byteseek/policy\t${POLICY_TYPO}\n`,
    code: 3,
  },
  {
    name: "an MCP server entry that does not validate is refused",
    args: ["set", "/byteseek/mcp/up", 'json:{"command":[],"enabled":"yes"}'],
    stdout: "",
    stderr: `/byteseek/mcp/up is not a valid MCP server entry, so it was not written:\n${MCP_UP_PROBLEMS.map((p) => `- ${p}\n`).join("")}${UNCHECKED_HINT.replace("docs/TOOLS.md", "README.md")}`,
    code: 1,
  },
  {
    name: "--unchecked stores the MCP server entry anyway",
    args: ["set", "/byteseek/mcp/up", 'json:{"command":[],"enabled":"yes"}', "--unchecked"],
    stdout: "",
  },
  {
    name: "tools --check reports the stored invalid MCP server entry beside the policy, and exits 3",
    args: ["tools", "--check"],
    stdout: `/byteseek/policy\t${POLICY_TYPO}\n${MCP_UP_PROBLEMS.map((p) => `/byteseek/mcp/up\t${p}\n`).join("")}`,
    code: 3,
  },
  {
    name: "policy says the policy in force is invalid",
    args: ["policy"],
    stdout: "",
    stderr: `the policy at /byteseek/policy is invalid, so every call is denied: ${POLICY_TYPO}\n`,
    code: 1,
  },
];

/** mv, cp and grep: a subtree moved and copied in one revision each, then searched. */
const moving: GoldenCase[] = [
  { name: "set a value to move", args: ["set", "/src/a", "string:hello"], stdout: "" },
  { name: "set a deeper one", args: ["set", "/src/d/b", "string:say hello\nand goodbye"], stdout: "" },
  {
    name: "mv a directory in one revision",
    args: ["mv", "/src/", "/dst/", "-o", "json"],
    stdout: '{"from":"/src/","to":"/dst/","revision":3,"keys":4}\n',
  },
  {
    name: "the source is gone",
    args: ["get", "/src/", "/dst/d/b"],
    stdout: "/src/\t(nil)\n/dst/d/b\tchar/utf8:say hello\nand goodbye\n",
  },
  { name: "cp a value into a directory keeps its name", args: ["cp", "/dst/a", "/copies/"], stdout: "" },
  {
    name: "the copy",
    args: ["get", "/copies/a", "/dst/a"],
    stdout: "/copies/a\tchar/utf8:hello\n/dst/a\tchar/utf8:hello\n",
  },
  {
    name: "mv onto an existing target needs --overwrite",
    args: ["mv", "/copies/", "/dst/"],
    stdout: "",
    stderr: "/dst/ already exists; move with overwrite to replace it, or choose another target\n",
    code: 1,
  },
  {
    name: "mv a directory into itself is refused",
    args: ["mv", "/dst/", "/dst/d/x/"],
    stdout: "",
    stderr: "/dst/d/x/ is inside /dst/: a directory cannot be moved or copied into itself\n",
    code: 1,
  },
  {
    name: "cp --overwrite replaces the target whole",
    args: ["cp", "/copies/", "/dst/", "--overwrite"],
    stdout: "",
  },
  { name: "the target holds what the source held", args: ["ls", "/dst/"], stdout: "a\tchar/utf8\thello\n" },
  { name: "set more to search", args: ["set", "/notes/x", "string:alpha\nhello there"], stdout: "" },
  {
    name: "grep prints key:line:text in key order",
    args: ["grep", "hello"],
    stdout: "/copies/a:1:hello\n/dst/a:1:hello\n/notes/x:2:hello there\n",
  },
  {
    name: "grep below a prefix",
    args: ["grep", "hello", "/notes/", "-o", "ndjson"],
    stdout: '{"key":"/notes/x","line":2,"preview":"hello there"}\n',
  },
  { name: "grep --keys matches paths", args: ["grep", "--keys", "tes/"], stdout: "/notes/\n/notes/x\n" },
  { name: "grep --regex", args: ["grep", "--regex", "^h.*e$"], stdout: "/notes/x:2:hello there\n" },
  {
    name: "grep --limit stops and says there are more",
    args: ["grep", "hello", "--limit", "1", "-o", "json"],
    stdout: '{"matches":[{"key":"/copies/a","line":1,"preview":"hello"}],"next":"/copies/a"}\n',
    stderr: "kvspace grep: stopped after 1 matches; there are more (raise --limit, or narrow the prefix)\n",
  },
  { name: "a system entry beside a value", args: ["set", "/h/d/‥sys", "string:bookkeeping"], stdout: "" },
  { name: "the value", args: ["set", "/h/d/v", "string:v"], stdout: "" },
  {
    name: "tree --depth 1 counts what a listing shows, not system entries (#35: tools/ (14) for 13)",
    args: ["tree", "--depth", "1", "/h/"],
    stdout: "/h/\n└── d/\t(1)\n",
  },
  { name: "list counts the same", args: ["ls", "/h/"], stdout: "d/\tindex\t(1)\n" },
];

export const GOLDEN_SCRIPTS: GoldenScript[] = [
  { name: "editing a store", cases: editing },
  { name: "errors", independent: true, cases: errors },
  { name: "input", cases: input },
  { name: "tools", seeded: true, cases: tools },
  { name: "checked writes", seeded: true, cases: checked },
  { name: "guidance", cases: guidance },
  { name: "moving and searching", cases: moving },
];

/**
 * The end-to-end contract, run as real `node dist/cli/kvspace.js` processes: each exit code,
 * stdin, SIGINT, a tool call. Everything else is pinned in-process by the scripts above.
 */
export const CONTRACT: GoldenCase[] = [
  { name: "set", args: ["set", "/c/n", "int:1"], stdout: "" },
  { name: "set ro", args: ["set", "/c/ro", "string:x", "ro"], stdout: "" },
  { name: "get", args: ["get", "/c/n", "/nope"], stdout: "/c/n\tint64:1\n/nope\t(nil)\n" },
  {
    name: "an error: exit 1, its message on stderr",
    args: ["set", "/c/ro", "string:y"],
    stdout: "",
    stderr: "/c/ro is read-only; force the write or mark it writable first\n",
    code: 1,
  },
  {
    name: "a declaration naming a built-in that is not shipped: refused, exit 1, the problem on stderr",
    args: [
      "set",
      "/byteseek/tools/text.alias",
      'json:{"name":"text.alias","description":"d","params":{"type":"object"},"impl":{"kind":"builtin","ref":"edit.nothing"}}',
    ],
    stdout: "",
    stderr: `/byteseek/tools/text.alias is not a valid tool declaration, so it was not written:\n- impl.ref: no built-in "edit.nothing" is shipped; known: ${SHIPPED_REFS}\n${UNCHECKED_HINT}`,
    code: 1,
  },
  {
    name: "a usage error: exit 2",
    args: ["get"],
    stdout: "",
    stderr: "kvspace get: missing <key>\nusage: kvspace get <key>...\n",
    code: 2,
  },
  {
    name: "help: exit 0",
    args: ["get", "--help"],
    stdout:
      "Usage: kvspace get <key>...\n\nprint values\n\nOptions:\n  -o, --output <format>  print data as text | json | ndjson\n  -q, --quiet            no notes or progress on stderr (errors still)\n  -h, --help             print help\n\nPrints key<TAB>kind:value per key, key<TAB>index:(N) for a directory (its key ends with /),\nkey<TAB>(nil) for an absent key. /a (a value) and /a/ (a directory) are different keys.\n-o json (or ndjson): one JSON object a key, as GET /v1/tree/<key> answers, {key, absent: true} when absent.\n\n",
  },
  {
    name: "a typo: exit 2, the nearest command suggested",
    args: ["lst", "/"],
    stdout: "",
    stderr:
      "kvspace: unknown command 'lst'\n(Did you mean one of list, ls?)\n(kvspace --help lists the commands)\n",
    code: 2,
  },
  {
    name: "import from stdin",
    args: ["import", "-"],
    stdin: '{"key":"/in/a","kind":"bool","value":false}\n',
    stdout: "imported\t1\trev=3\n",
  },
  {
    name: "watch until SIGINT: exit 0",
    args: ["watch", "/c/", "--from", "1"],
    interruptAfterLines: 3,
    stdout: "1\tput\t/c/\tindex\n1\tput\t/c/n\tint64:1\n2\tput\t/c/ro\tchar/utf8:x\n",
  },
  {
    name: "call ok: exit 0 (the store seeded on open)",
    env: { BYTESEEK_SEED: "1" },
    args: ["call", "tree.get", '{"key":"/c/n"}'],
    stdout: "/c/n (int64, version 1):\n1\n",
  },
  {
    name: "call failing: exit 3",
    env: { BYTESEEK_SEED: "1" },
    args: ["call", "tree.get", "{}"],
    stdout:
      "Invalid arguments for tree.get:\n- key: expected a value (this argument is required)\nSignature: tree.get(key: string)\nFix the arguments and call again.\n",
    code: 3,
  },
];
