/** svc's version, as `svc --version` and the internal-error report print it; core/version.test.ts keeps it equal to package.json's. */
export const SVC_VERSION = "0.1.0";
