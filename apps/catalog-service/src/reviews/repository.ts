// Prisma queries of reviews. A review and the product's rating counters change together.
import { ApiError } from '@platform/errors';
import { type DomainEvent, recordEvent, unitOfWork } from '@platform/events';
import { findKeysetPage, type PageRequest } from '@platform/paging';
import type { PrismaClient } from '../generated/prisma/client';

/** A review as stored. */
export interface ReviewRow {
  id: string;
  productId: string;
  /** Null once the author deleted their account. */
  userId: string | null;
  /** 1 to 5 stars. */
  rating: number;
  title: string | null;
  body: string | null;
  createdAt: Date;
}

/** A review to write; its time is the database's. */
export type NewReview = Omit<ReviewRow, 'createdAt'>;

/**
 * The advisory lock (its first key; the second is a hash of the user's id) that orders a user's
 * review writes against the recording of their deletion. Review writes share it, the deletion
 * takes it alone: the deletion waits for a review under way to commit (and then unlinks it), and a
 * review that comes after it sees the user deleted.
 */
const USER_DELETION_LOCK = 0x63746c67; // "ctlg" in ASCII

export class ReviewRepository {
  constructor(private readonly prisma: PrismaClient) {}

  /**
   * Inserts the review and bumps the product's counters in one transaction. The UPDATE takes
   * the product row's lock and its SET reads the row as locked, so concurrent reviews add up
   * exactly. A second review by the same user fails on the unique index and rolls back whole.
   * The event `eventOf` makes of the review commits with it. A user who deleted their account
   * (`removeAuthor`) while their token still works gets 401 and nothing is written.
   */
  createAndRate(data: NewReview, eventOf: (review: ReviewRow) => DomainEvent): Promise<ReviewRow> {
    return unitOfWork(this.prisma, async (tx) => {
      if (data.userId) {
        await tx.$executeRaw`SELECT pg_advisory_xact_lock_shared(${USER_DELETION_LOCK}::int, hashtext(${data.userId}::text))`;
        if ((await tx.deletedUser.count({ where: { userId: data.userId } })) > 0) throw ApiError.unauthenticated('The account of this access token no longer exists.');
      }
      const review = await tx.review.create({ data });
      // review.created happened at the review's createdAt, the one reading its row was written with.
      await recordEvent(tx, { ...eventOf(review), occurredAt: review.createdAt });
      const stars = data.rating;
      await tx.$executeRaw`
        UPDATE products SET
          stars_1 = stars_1 + (${stars}::int = 1)::int,
          stars_2 = stars_2 + (${stars}::int = 2)::int,
          stars_3 = stars_3 + (${stars}::int = 3)::int,
          stars_4 = stars_4 + (${stars}::int = 4)::int,
          stars_5 = stars_5 + (${stars}::int = 5)::int,
          rating = round(
            (stars_1 + 2 * stars_2 + 3 * stars_3 + 4 * stars_4 + 5 * stars_5 + ${stars}::int)::numeric
            / (stars_1 + stars_2 + stars_3 + stars_4 + stars_5 + 1), 2)
        WHERE id = ${data.productId}::uuid`;
      return review;
    });
  }

  /**
   * A deleted user's reviews stay, without an author; the products' rating counters do not change.
   * The deletion is recorded with it, once their reviews under way committed, so that none of
   * theirs is written afterwards (createAndRate). Running it again changes nothing.
   */
  async removeAuthor(userId: string): Promise<number> {
    return this.prisma.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(${USER_DELETION_LOCK}::int, hashtext(${userId}::text))`;
      await tx.deletedUser.createMany({ data: [{ userId }], skipDuplicates: true });
      const { count } = await tx.review.updateMany({ where: { userId }, data: { userId: null } });
      return count;
    });
  }

  findById(productId: string, id: string): Promise<ReviewRow | null> {
    return this.prisma.review.findFirst({ where: { id, productId } });
  }

  async listByProduct(productId: string, page: PageRequest): Promise<{ rows: ReviewRow[]; total?: number }> {
    return findKeysetPage(page, {
      find: (keyset) => this.prisma.review.findMany({ where: { AND: [{ productId }, keyset.where] }, orderBy: keyset.orderBy, take: keyset.take, skip: keyset.skip }),
      count: () => this.prisma.review.count({ where: { productId } }),
    });
  }
}
