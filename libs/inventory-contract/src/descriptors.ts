// The contract's descriptors as buf compiled them, for server reflection.
import { fromBinary, toBinary } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema, FileDescriptorSetSchema } from '@bufbuild/protobuf/wkt';
import { fileDescriptorSets } from './generated/descriptors';

/** Every file of the inventory API and of grpc.health.v1, each a serialized FileDescriptorProto. */
export function fileDescriptorProtos(): Buffer[] {
  return fileDescriptorSets.flatMap((base64) => fromBinary(FileDescriptorSetSchema, Buffer.from(base64, 'base64')).file.map((file) => Buffer.from(toBinary(FileDescriptorProtoSchema, file))));
}
