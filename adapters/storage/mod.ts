/**
 * Object storage: the interface the S3 and filesystem stores share (object_store.ts), beside the
 * stores themselves (s3.ts, fs.ts) and S3's signer (sigv4.ts). Keys come only from
 * `domain/storage_keys.ts`.
 *
 * @module
 */
export {
  type ByteRange,
  type ObjectBody,
  type ObjectInfo,
  type ObjectStore,
  type PutOptions,
  RangeNotSatisfiableError,
  readAll,
  StorageError,
} from "./object_store.ts";
